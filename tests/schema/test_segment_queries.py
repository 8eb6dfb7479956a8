"""The segment queries (segment_*) of every dialect, at the SQL level: creating a tag on
first use, fetching disjoint segments, and many processes fetching at once."""

import threading

import pytest

from conftest import Db

MAX_BIGINT = 2**63 - 1


@pytest.fixture
def db(connect):
    """A connection to an emptied id_segment table."""
    db = connect()
    db.execute("DELETE FROM id_segment")
    yield db
    db.close()


def fetch(db: Db, tag: str, step: int, *, now=1000) -> tuple[int, int]:
    """The host's fetch: one transaction; on first use of the tag, end it, create the tag
    outside any transaction and start again. The segment."""
    for _ in range(2):
        db.execute("BEGIN IMMEDIATE" if db.dialect == "sqlite" else "BEGIN")
        try:
            if db.run("segment_fetch", tag=tag, step=step, now_millis=now) == 1:
                row = db.run("segment_load", tag=tag)
                db.execute("COMMIT")
                assert row["step"] == step
                return row["max_id"] - step + 1, row["max_id"]
            db.execute("ROLLBACK")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.run("segment_create", tag=tag, step=step, now_millis=now)
    raise AssertionError("the tag was not created")


def test_a_tag_is_created_on_first_use_and_starts_at_one(db):
    assert db.run("segment_fetch", tag="orders", step=10, now_millis=1) == 0
    assert db.run("segment_load", tag="orders") is None
    assert db.run("segment_create", tag="orders", step=10, now_millis=1) == 1
    assert db.run("segment_create", tag="orders", step=99, now_millis=2) == 0
    assert db.run("segment_load", tag="orders") == {"max_id": 0, "step": 10}
    assert fetch(db, "orders", 10) == (1, 10)
    assert fetch(db, "orders", 25) == (11, 35)
    assert fetch(db, "invoices", 5) == (1, 5), "tags never meet"
    row = db.execute("SELECT max_id, step, created_millis, updated_millis FROM id_segment "
                     "WHERE max_id = 35")
    assert row == [(35, 25, 1, 1000)]


def test_a_fetch_that_would_pass_bigint_fails_and_changes_nothing(db):
    fetch(db, "full", MAX_BIGINT - 5)
    with pytest.raises(Exception):
        fetch(db, "full", 6)
    if db.dialect == "postgres" and db.conn.info.transaction_status != 0:
        db.conn.rollback()
    assert db.run("segment_load", tag="full") == {"max_id": MAX_BIGINT - 5, "step": MAX_BIGINT - 5}
    assert fetch(db, "full", 5) == (MAX_BIGINT - 4, MAX_BIGINT)


@pytest.mark.parametrize("tag", ["o'brien", "a;DROP TABLE id_segment;--", "%", "a_c", ":tag", "?"])
def test_tags_are_stored_literally(db, tag):
    assert fetch(db, tag, 3) == (1, 3)
    assert fetch(db, tag.upper() if tag.upper() != tag else tag + "x", 3) == (1, 3)


def test_tag_length_is_checked(db):
    assert fetch(db, "t" * 64, 1) == (1, 1)
    with pytest.raises(Exception):
        fetch(db, "t" * 65, 1)


def test_processes_fetching_at_once_get_disjoint_segments_without_gaps(connect, db):
    processes, fetches = 8, 25
    segments: list[tuple[int, int]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(processes)

    def work(n: int) -> None:
        conn = connect()
        try:
            barrier.wait()
            for k in range(fetches):
                segments.append(fetch(conn, "shared", 1 + (n * fetches + k) % 7))
        except BaseException as error:  # reported below
            errors.append(error)
        finally:
            conn.close()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(processes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    ordered = sorted(segments)
    assert ordered[0][0] == 1
    for (_, last), (first, _) in zip(ordered, ordered[1:]):
        assert first == last + 1, "segments overlap or leave a gap"
    assert db.run("segment_load", tag="shared")["max_id"] == ordered[-1][1]
