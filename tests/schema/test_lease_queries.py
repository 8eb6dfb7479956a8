"""The worker-id lease queries (lease_*) of every dialect, at the SQL level: seeding,
finding, taking by compare-and-set, renewing, releasing, and many processes acquiring at
once."""

import threading
import time

import psycopg
import pymysql
import pytest

from conftest import Db

LEASE = 30_000


@pytest.fixture
def db(connect):
    """A connection to an emptied worker_lease table."""
    db = connect()
    db.execute("DELETE FROM worker_lease")
    yield db
    db.close()


def begin(db: Db) -> None:
    """Starts the acquisition's transaction: SQLite takes its write lock at once."""
    db.execute("BEGIN IMMEDIATE" if db.dialect == "sqlite" else "BEGIN")


def find(db: Db, *, max_worker=63, now=1000):
    row = db.run("lease_find", max_worker=max_worker, now_millis=now)
    if row is not None:
        assert set(row) == {"worker_id", "owner", "fencing_token", "lease_deadline_millis",
                            "high_water_millis"}
    return row


def take(db: Db, row: dict, *, owner: str, now: int, lease=LEASE) -> int:
    """lease_take with the core's acquisition of `row` (token + 1, the start point as the
    high-water mark: the later of high-water mark and deadline for an expired lease)."""
    held = row["owner"] is not None
    start_after = max(row["high_water_millis"], row["lease_deadline_millis"]) if held \
        else row["high_water_millis"]
    return db.run("lease_take", worker_id=row["worker_id"], owner=owner,
                  fencing_token=row["fencing_token"] + 1, lease_deadline_millis=now + lease,
                  high_water_millis=start_after, expected_token=row["fencing_token"],
                  now_millis=now)


def acquire(db: Db, owner: str, *, now=1000, max_worker=63) -> tuple[int, int] | None:
    """The host's acquisition, as the core's rules drive it: (worker id, token), or None
    when no worker id is free (the core's lease.no_worker_free)."""
    for _ in range(1000):
        try:
            found = acquire_round(db, owner, now=now, max_worker=max_worker)
        except (pymysql.err.OperationalError, psycopg.errors.DeadlockDetected) as error:
            # A deadlock among concurrent seeds is run again, as the core's driver does
            # (a serialization failure or deadlock is retried).
            if isinstance(error, pymysql.err.OperationalError) and error.args[0] != 1213:
                raise
            db.execute("ROLLBACK")
            continue
        if found is not False:
            return found
    raise AssertionError("the acquisition did not settle")


def acquire_round(db: Db, owner: str, *, now: int, max_worker: int):
    """One round of [acquire]: the lease, None (no worker free) or False (go again)."""
    begin(db)
    row = find(db, max_worker=max_worker, now=now)
    if row is not None:
        taken = take(db, row, owner=owner, now=now)
        db.execute("COMMIT")
        return (row["worker_id"], row["fencing_token"] + 1) if taken == 1 else False
    db.execute("COMMIT")
    count = db.run("lease_count", max_worker=max_worker, now_millis=now)
    if count["present_count"] <= max_worker:
        db.run("lease_seed", max_worker=max_worker, now_millis=now)
    elif count["free_count"] == 0:
        return None
    else:
        time.sleep(0.002)
    return False


def load(db: Db, worker_id: int) -> dict | None:
    row = db.run("lease_load", worker_id=worker_id)
    if row is not None and isinstance(row["owner"], (bytes, bytearray)):
        row["owner"] = row["owner"].decode()
    return row


def renew(db: Db, worker_id: int, token: int, *, now: int, high_water: int,
          lease=LEASE) -> int:
    return db.run("lease_renew", worker_id=worker_id, fencing_token=token,
                  lease_deadline_millis=now + lease, high_water_millis=high_water,
                  now_millis=now)


def release(db: Db, worker_id: int, token: int, *, now: int, high_water: int) -> int:
    return db.run("lease_release", worker_id=worker_id, fencing_token=token,
                  high_water_millis=high_water, now_millis=now)


def test_seed_creates_every_free_worker_id_once(db):
    assert db.run("lease_seed", max_worker=1023, now_millis=5) == 1024
    assert db.run("lease_seed", max_worker=1023, now_millis=6) == 0
    assert db.execute("SELECT COUNT(*), MIN(worker_id), MAX(worker_id) FROM worker_lease") == [
        (1024, 0, 1023)]
    assert load(db, 7) == {"worker_id": 7, "owner": None, "fencing_token": 0,
                           "lease_deadline_millis": 0, "high_water_millis": 0,
                           "acquired_millis": 0, "updated_millis": 5}
    assert db.run("lease_seed", max_worker=1027, now_millis=7) == 4


def test_count_tells_missing_rows_from_held_ones(db):
    assert db.run("lease_count", max_worker=3, now_millis=0) == {
        "present_count": 0, "free_count": 0}
    acquire(db, "a", max_worker=3)
    acquire(db, "b", max_worker=3)
    count = db.run("lease_count", max_worker=3, now_millis=1000)
    assert count == {"present_count": 4, "free_count": 2}
    assert all(type(value) is int for value in count.values()), "integers in every driver"
    count = db.run("lease_count", max_worker=3, now_millis=31000)
    assert count == {"present_count": 4, "free_count": 4}
    assert acquire(db, "c", max_worker=1) is None


def test_seed_reaches_the_largest_leased_range(db):
    assert db.run("lease_seed", max_worker=65535, now_millis=1) == 65536
    assert db.execute("SELECT COUNT(*), MAX(worker_id) FROM worker_lease") == [(65536, 65535)]


def test_worker_ids_outside_the_leased_range_are_refused(db):
    placeholder = ":v" if db.dialect == "sqlite" else "%(v)s"
    for worker_id in (-1, 65536):
        with pytest.raises(Exception):
            db.execute(f"""INSERT INTO worker_lease (worker_id, owner, fencing_token,
                               lease_deadline_millis, high_water_millis, acquired_millis,
                               updated_millis)
                           VALUES ({placeholder}, NULL, 0, 0, 0, 0, 0)""", {"v": worker_id})
        if db.dialect == "postgres" and db.conn.info.transaction_status != 0:
            db.conn.rollback()
    assert db.execute("SELECT COUNT(*) FROM worker_lease") == [(0,)]


def test_find_takes_the_lowest_free_or_ended_lease(db):
    assert acquire(db, "a") == (0, 1)
    assert acquire(db, "b") == (1, 1)
    assert acquire(db, "c", now=1000) == (2, 1)
    row = find(db, now=1000)
    assert row["worker_id"] == 3 and row["owner"] is None
    # worker 0's lease ends at 31000: found from then on, with its holder and token.
    row = find(db, now=31000)
    assert (row["worker_id"], row["fencing_token"], row["lease_deadline_millis"]) == (0, 1, 31000)
    assert release(db, 2, 1, now=2000, high_water=1999) == 1
    assert find(db, now=2000)["worker_id"] == 2
    assert find(db, now=2000, max_worker=1) is None, "ids above max_worker are never found"


def test_find_after_skips_the_rows_up_to_a_worker_id(db):
    assert acquire(db, "a") == (0, 1)
    assert release(db, 0, 1, now=2000, high_water=1999) == 1
    assert find(db, now=2000)["worker_id"] == 0
    columns = {"worker_id", "owner", "fencing_token", "lease_deadline_millis", "high_water_millis"}
    row = db.run("lease_find_after", max_worker=63, now_millis=2000, after_worker=-1)
    assert set(row) == columns and row["worker_id"] == 0
    row = db.run("lease_find_after", max_worker=63, now_millis=2000, after_worker=0)
    assert row["worker_id"] == 1
    assert db.run("lease_find_after", max_worker=1, now_millis=2000, after_worker=1) is None


def test_take_is_a_compare_and_set(db):
    db.run("lease_seed", max_worker=3, now_millis=0)
    row = find(db, now=1000)
    assert take(db, row, owner="a", now=1000) == 1
    assert take(db, row, owner="b", now=1000) == 0, "the same row taken twice"
    assert load(db, 0)["owner"] == "a"
    held = {**find(db, max_worker=0, now=31000)}
    assert take(db, held, owner="b", now=30999) == 0, "a running lease is never taken"
    assert take(db, {**held, "fencing_token": 5}, owner="b", now=31000) == 0
    assert take(db, held, owner="b", now=31000) == 1
    row = load(db, 0)
    assert (row["owner"], row["fencing_token"], row["lease_deadline_millis"],
            row["high_water_millis"], row["acquired_millis"]) == ("b", 2, 61000, 31000, 31000)


def test_renew_extends_a_live_lease_of_its_holder_only(db):
    worker, token = acquire(db, "a", now=1000)
    assert renew(db, worker, token + 1, now=11000, high_water=10000) == 0
    assert renew(db, worker, token, now=31000, high_water=10000) == 0, "after the deadline"
    assert renew(db, worker, token, now=11000, high_water=10000) == 1
    assert renew(db, worker, token, now=11000, high_water=10000) == 0, "does not extend"
    assert renew(db, worker, token, now=5000, high_water=10000) == 0, "would shorten"
    row = load(db, worker)
    assert (row["lease_deadline_millis"], row["high_water_millis"], row["updated_millis"]) == (
        41000, 10000, 11000)


def test_a_taken_over_lease_fences_off_its_old_holder(db):
    worker, token = acquire(db, "old", now=1000)
    assert renew(db, worker, token, now=11000, high_water=10500) == 1
    assert acquire(db, "new", now=41000, max_worker=0) == (worker, token + 1)
    row = load(db, worker)
    assert (row["owner"], row["high_water_millis"]) == ("new", 41000), \
        "the new holder starts after the old deadline"
    assert renew(db, worker, token, now=41001, high_water=40000) == 0
    assert release(db, worker, token, now=41002, high_water=40000) == 0
    assert load(db, worker)["owner"] == "new"


def test_release_frees_the_id_and_stores_the_final_high_water_mark(db):
    worker, token = acquire(db, "a", now=1000)
    assert release(db, worker, token, now=5000, high_water=4999) == 1
    assert release(db, worker, token, now=5001, high_water=4999) == 0, "released twice"
    row = load(db, worker)
    assert (row["owner"], row["lease_deadline_millis"], row["high_water_millis"],
            row["fencing_token"]) == (None, 5000, 4999, 1)
    assert acquire(db, "b", now=5000) == (worker, 2)
    assert load(db, worker)["high_water_millis"] == 4999, "no deadline wait after a release"


def test_owner_text_is_stored_literally(db):
    owner = "pod-7/o'brien;--\"%s:id?"
    acquire(db, owner)
    assert load(db, 0)["owner"] == owner


@pytest.mark.parametrize("processes", [64])
def test_processes_starting_at_once_each_get_their_own_id_up_to_capacity(connect, db, processes):
    results: list[tuple[int, int] | None] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(processes + 1)

    def start(n: int) -> None:
        conn = connect()
        try:
            barrier.wait()
            results.append(acquire(conn, f"process-{n}", now=1000, max_worker=63))
        except BaseException as error:  # reported below
            errors.append(error)
        finally:
            conn.close()

    threads = [threading.Thread(target=start, args=(n,)) for n in range(processes + 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    taken = [result for result in results if result is not None]
    assert sorted(worker for worker, _ in taken) == list(range(64))
    assert results.count(None) == 1, "the 65th finds no free worker id"
    owners = db.execute("SELECT COUNT(DISTINCT owner) FROM worker_lease WHERE owner IS NOT NULL")
    assert owners == [(64,)]


def test_find_skips_a_row_another_acquisition_holds(connect, db):
    if db.dialect == "sqlite":
        pytest.skip("SQLite serialises writers: the second acquisition waits for the lock")
    db.run("lease_seed", max_worker=3, now_millis=0)
    first = connect()
    try:
        begin(first)
        assert find(first)["worker_id"] == 0
        if db.dialect == "postgres":
            db.execute("SET lock_timeout = '2s'")
        else:
            db.execute("SET innodb_lock_wait_timeout = 2")
        begin(db)
        assert find(db)["worker_id"] == 1
        db.execute("COMMIT")
        first.execute("COMMIT")
    finally:
        first.close()
