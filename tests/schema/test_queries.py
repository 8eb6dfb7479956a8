"""Every named query of every dialect and the guarantees it gives, at the SQL level."""

import threading

import pymysql
import pytest

from conftest import Db, fresh_database
from named_queries import DIALECTS, limits, load_queries, migrations

FP_A = bytes(range(32))
FP_B = bytes([0xBB] * 32)
LIMIT = limits()["record.response_body"]  # the core's response size limit, bytes
KEY = {"scope": "tenant-1", "kind": "order.create", "key_id": "k-1"}
RECORD_COLUMNS = {
    "status", "fingerprint", "fencing_token", "lease_deadline_millis", "created_millis",
    "updated_millis", "expires_millis", "response_body", "response_content_type", "error",
}


def claim(db: Db, key=KEY, *, token=1, now=1000, lease=2000, expires=101000, fp=FP_A,
          written_at=None) -> bool:
    """Runs claim and says whether it inserted the record (row returned, or 1 affected row;
    on MySQL a duplicate is the duplicate-key error 1062, which the core's driver reads as
    "the key has a record").

    The claim is decided at `now` (its creation time) and written at `written_at`
    (default: the same millisecond)."""
    try:
        result = db.run("claim", **key, fingerprint=fp, fencing_token=token,
                        lease_deadline_millis=lease, created_millis=now, expires_millis=expires,
                        now_millis=now if written_at is None else written_at)
    except pymysql.err.IntegrityError as error:
        assert db.dialect == "mysql" and error.args[0] == 1062, error
        return False
    if db.queries["claim"].kind == ":execrows":
        assert result in (0, 1)
        return result == 1
    return result is not None


def load(db: Db, key=KEY) -> dict | None:
    row = db.run("load", **key)
    if row is not None:
        assert set(row) == RECORD_COLUMNS
        for column in ("fingerprint", "response_body"):
            if row[column] is not None:
                row[column] = bytes(row[column])
    return row


def complete(db: Db, key=KEY, *, token=1, created=1000, now=1500, body=b"{}",
             content_type="application/json") -> int:
    return db.run("complete", **key, fencing_token=token, created_millis=created,
                  now_millis=now, response_body=body, response_content_type=content_type)


def reclaim(db: Db, key=KEY, *, token=2, expected_token=1, expected_created=1000,
            expected_status="pending", now=2000, lease=3000) -> int:
    return db.run("reclaim", **key, fencing_token=token, lease_deadline_millis=lease,
                  now_millis=now, expected_token=expected_token,
                  expected_created_millis=expected_created, expected_status=expected_status)


def cleanup(db: Db, *, now, batch=100) -> int:
    return db.run("cleanup", now_millis=now, batch_size=batch)


# --- the files themselves ----------------------------------------------------------


def test_every_dialect_has_the_same_queries_with_the_same_parameters():
    sets = {dialect: load_queries(dialect) for dialect in DIALECTS}
    expected = set(sets["postgres"])
    assert {"claim", "load", "complete", "fail", "release", "reclaim", "cleanup"} <= expected
    for dialect, queries in sets.items():
        assert set(queries) == expected, dialect
    for name in expected:
        params = {dialect: sorted(set(sets[dialect][name].params)) for dialect in DIALECTS}
        assert len({tuple(p) for p in params.values()}) == 1, (name, params)


def test_migrations_are_numbered_alike_in_every_dialect():
    names = {dialect: [name for name, _ in migrations(dialect)] for dialect in DIALECTS}
    assert names["postgres"] == names["mysql"] == names["sqlite"]
    assert names["postgres"][0] == "0001_idempotency_record.sql"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_migrations_applied_twice_change_nothing(dialect, tmp_path):
    db = fresh_database(dialect, "mintid_schema_migrate", tmp_path)()
    try:
        db.migrate()
        before = describe(db)
        db.migrate()
        assert describe(db) == before
        recorded = db.execute("SELECT version, name FROM mintid_schema_migrations ORDER BY version")
        assert recorded == [(int(name[:4]), name[5:-4]) for name, _ in migrations(dialect)]
    finally:
        db.close()


def describe(db: Db) -> list:
    """The tables, columns and indexes of the test database, in a comparable form."""
    if db.dialect == "sqlite":
        return db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY type, name")
    if db.dialect == "postgres":
        return (db.execute("""SELECT table_name, column_name, data_type FROM information_schema.columns
                              WHERE table_schema = 'public' ORDER BY 1, 2""")
                + db.execute("""SELECT indexname, indexdef FROM pg_indexes
                                WHERE schemaname = 'public' ORDER BY 1"""))
    return (db.execute("""SELECT table_name, column_name, column_type FROM information_schema.columns
                          WHERE table_schema = DATABASE() ORDER BY 1, 2""")
            + db.execute("""SELECT table_name, index_name, column_name, seq_in_index
                            FROM information_schema.statistics
                            WHERE table_schema = DATABASE() ORDER BY 1, 2, 4"""))


# --- claim and load ----------------------------------------------------------------


def test_claim_twice_the_second_gets_nothing_and_changes_nothing(db):
    assert claim(db)
    first = load(db)
    assert not claim(db, token=1, now=1200, lease=2200, expires=101200, fp=FP_B)
    assert load(db) == first


def test_a_claim_whose_lease_ended_before_the_write_is_not_written(db):
    assert not claim(db, now=1000, lease=2000, written_at=2000)
    assert load(db) is None
    assert claim(db, now=1000, lease=2000, written_at=1999)


def test_load_returns_the_record_as_claimed(db):
    assert load(db) is None
    assert claim(db, now=1000, lease=2000, expires=101000)
    assert load(db) == {
        "status": "pending", "fingerprint": FP_A, "fencing_token": 1,
        "lease_deadline_millis": 2000, "created_millis": 1000, "updated_millis": 1000,
        "expires_millis": 101000, "response_body": None, "response_content_type": None,
        "error": None,
    }


def test_times_and_tokens_keep_64_bit_values(db):
    big = 2**62 + 12345
    assert claim(db, token=2**62, now=big, lease=big + 1, expires=2**63 - 1)
    row = load(db)
    assert (row["fencing_token"], row["created_millis"], row["expires_millis"]) == (
        2**62, big, 2**63 - 1)


@pytest.mark.parametrize("text", [
    "o'brien", 'say "hi"', "a;DROP TABLE idempotency_record;--", "back\\slash", "100%",
    "a_c", "`tick`", "$1", ":scope", "?", "%(scope)s", "x'||'y", "/*c*/",
])
def test_special_characters_are_stored_literally(db, text):
    key = {"scope": text, "kind": text[:32], "key_id": text}
    assert claim(db, key)
    assert load(db, key)["status"] == "pending"
    stored = db.execute("SELECT scope, kind, key_id FROM idempotency_record")
    assert [tuple(decode(v) for v in row) for row in stored] == [(text, text[:32], text)]


def decode(value) -> str:
    return value.decode("ascii") if isinstance(value, (bytes, bytearray)) else value


def test_keys_differing_in_case_or_by_a_wildcard_are_different_keys(db):
    ids = ["abc", "ABC", "a_c", "a%c", "abc_"]
    for key_id in ids:
        assert claim(db, {**KEY, "key_id": key_id})
    assert len(db.execute("SELECT key_id FROM idempotency_record")) == len(ids)
    for key_id in ids:
        assert not claim(db, {**KEY, "key_id": key_id})


def test_key_parts_up_to_their_limits_fit_and_longer_ones_fail(db):
    longest = {"scope": "s" * 64, "kind": "k" * 32, "key_id": "i" * 64}
    assert claim(db, longest)
    for part, size in (("scope", 65), ("kind", 33), ("key_id", 65)):
        with pytest.raises(Exception):
            claim(db, {**KEY, part: "x" * size})
        reset(db)
    with pytest.raises(Exception):
        claim(db, {**KEY, "key_id": ""})
    reset(db)
    assert load(db) is None


def reset(db: Db) -> None:
    """Ends a failed statement's transaction where the driver needs it."""
    if db.dialect == "postgres" and db.conn.info.transaction_status != 0:
        db.conn.rollback()


@pytest.mark.parametrize("column, value", [("status", "done"), ("fingerprint", b"\x00" * 31),
                                           ("fencing_token", 0)])
def test_constraints_reject_values_outside_the_schema(db, column, value):
    claim(db)
    with pytest.raises(Exception):
        placeholder = ":v" if db.dialect == "sqlite" else "%(v)s"
        db.execute(f"UPDATE idempotency_record SET {column} = {placeholder}", {"v": value})
    reset(db)
    assert load(db)["status"] == "pending"


def test_the_cores_limits_are_the_schemas_constraints(db):
    """What the store drivers check before they write is exactly what the CHECKs allow."""
    assert LIMIT == 1048576
    content_type, error = limits()["record.response_content_type"], limits()["record.error"]
    for key_id, ok in (("at", True), ("over", False)):
        key = {**KEY, "key_id": key_id}
        extra = 0 if ok else 1
        assert claim(db, key)
        if ok:
            assert complete(db, key, content_type="a" * (content_type + extra)) == 1
        else:
            with pytest.raises(Exception):
                complete(db, key, content_type="a" * (content_type + extra))
            reset(db)
        key = {**KEY, "key_id": f"error-{key_id}"}
        assert claim(db, key)
        fail = lambda: db.run("fail", **key, fencing_token=1, created_millis=1000,  # noqa: E731
                              now_millis=1500, error="é" * ((error + extra) // 2) + "x" * (extra % 2),
                              response_body=None, response_content_type=None)
        if ok:
            assert fail() == 1
        else:
            with pytest.raises(Exception):
                fail()
            reset(db)
    for part, column in (("key.kind", "kind"), ("key.scope", "scope"), ("key.id", "key_id")):
        assert claim(db, {**KEY, column: "k" * limits()[part]})
        with pytest.raises(Exception):
            claim(db, {**KEY, column: "k" * (limits()[part] + 1)})
        reset(db)


# --- complete, fail, release -------------------------------------------------------


def test_complete_stores_the_response_bytes_exactly(db):
    body = bytes(range(256)) + b"\x00\xff\xfe"
    claim(db)
    assert complete(db, body=body, content_type="application/octet-stream", now=1500) == 1
    row = load(db)
    assert (row["status"], row["response_body"], row["response_content_type"]) == (
        "succeeded", body, "application/octet-stream")
    assert row["updated_millis"] == 1500 and row["fencing_token"] == 1


def test_complete_with_a_stale_fence_changes_no_row(db):
    claim(db)
    assert complete(db, token=2) == 0
    assert complete(db, created=999) == 0
    assert complete(db, key={**KEY, "key_id": "other"}) == 0
    assert load(db)["status"] == "pending"
    assert complete(db) == 1
    assert complete(db) == 0, "a second completion of an ended claim"


def test_complete_after_the_lease_passed_is_accepted_until_reclaimed(db):
    claim(db, lease=2000)
    assert complete(db, now=5000) == 1


def test_fail_stores_the_error_to_replay(db):
    claim(db)
    assert db.run("fail", **KEY, fencing_token=1, created_millis=1000, now_millis=1500,
                  error="card_declined: «refusée»", response_body=b'{"e":1}',
                  response_content_type="application/problem+json") == 1
    row = load(db)
    assert (row["status"], row["error"], row["response_body"]) == (
        "failed", "card_declined: «refusée»", b'{"e":1}')
    assert db.run("fail", **KEY, fencing_token=1, created_millis=1000, now_millis=1600,
                  error="again", response_body=None, response_content_type=None) == 0


def test_release_frees_the_key_and_keeps_the_token(db):
    claim(db)
    assert db.run("release", **KEY, fencing_token=2, created_millis=1000, now_millis=1500,
                  error="timeout") == 0
    assert db.run("release", **KEY, fencing_token=1, created_millis=1000, now_millis=1500,
                  error="timeout") == 1
    row = load(db)
    assert (row["status"], row["fencing_token"], row["response_body"], row["error"]) == (
        "failed_retryable", 1, None, "timeout")
    assert reclaim(db, expected_status="failed_retryable", now=1600, lease=2600) == 1
    assert load(db)["status"] == "pending"


def test_response_size_limit_is_enforced_and_leaves_the_record_pending(db):
    claim(db)
    with pytest.raises(Exception):
        complete(db, body=b"x" * (LIMIT + 1))
    reset(db)
    assert load(db)["status"] == "pending"
    assert complete(db, body=b"x" * LIMIT) == 1
    assert len(load(db)["response_body"]) == LIMIT


# --- reclaim -----------------------------------------------------------------------


def test_reclaim_never_takes_a_running_lease(db):
    claim(db, lease=2000)
    assert reclaim(db, now=1999) == 0
    assert load(db)["fencing_token"] == 1


def test_a_reclaim_whose_own_lease_ended_before_the_write_is_not_written(db):
    claim(db, lease=2000)
    assert reclaim(db, now=3000, lease=3000) == 0
    assert load(db)["fencing_token"] == 1


def test_reclaim_is_a_compare_and_set_on_the_loaded_record(db):
    claim(db, lease=2000)
    assert reclaim(db, expected_token=2, now=2000) == 0
    assert reclaim(db, expected_created=1, now=2000) == 0
    assert reclaim(db, expected_status="failed_retryable", now=2000) == 0
    assert reclaim(db, now=2000, lease=3000) == 1
    assert reclaim(db, now=2000, lease=3000) == 0, "the same takeover twice"
    row = load(db)
    assert (row["fencing_token"], row["lease_deadline_millis"], row["created_millis"],
            row["expires_millis"], row["updated_millis"]) == (2, 3000, 1000, 101000, 2000)


def test_after_a_takeover_the_old_holder_is_fenced_off(db):
    claim(db, lease=2000)
    assert reclaim(db, now=2500, lease=3500) == 1
    assert complete(db, token=1, now=2600, body=b"late") == 0
    assert complete(db, token=2, now=2700, body=b"new") == 1
    assert load(db)["response_body"] == b"new"


# --- cleanup -----------------------------------------------------------------------


def seed(db: Db, key_id: str, *, expires: int, lease: int, status: str = "pending") -> dict:
    key = {**KEY, "key_id": key_id}
    assert claim(db, key, now=0, lease=lease, expires=expires)
    if status == "succeeded":
        assert complete(db, key, created=0) == 1
    return key


def remaining(db: Db) -> list[str]:
    return sorted(decode(row[0]) for row in db.execute("SELECT key_id FROM idempotency_record"))


def test_cleanup_removes_expired_records_but_never_a_live_pending_one(db):
    seed(db, "done-expired", expires=100, lease=50, status="succeeded")
    seed(db, "pending-lease-passed", expires=100, lease=90)
    seed(db, "pending-lease-running", expires=100, lease=500)
    seed(db, "done-live", expires=1000, lease=50, status="succeeded")
    seed(db, "pending-live", expires=1000, lease=500)
    assert cleanup(db, now=99) == 0
    assert cleanup(db, now=100) == 2
    assert remaining(db) == ["done-live", "pending-lease-running", "pending-live"]
    assert cleanup(db, now=499) == 0
    assert cleanup(db, now=500) == 1
    assert remaining(db) == ["done-live", "pending-live"]


def test_cleanup_works_in_bounded_batches_oldest_first(db):
    for n in range(5):
        seed(db, f"k{n}", expires=10 + n, lease=1, status="succeeded")
    assert cleanup(db, now=100, batch=2) == 2
    assert remaining(db) == ["k2", "k3", "k4"]
    assert [cleanup(db, now=100, batch=2) for _ in range(3)] == [2, 1, 0]


def test_cleanup_skips_rows_a_live_transaction_holds(connect, db):
    if db.dialect == "sqlite":
        pytest.skip("SQLite serialises writers: there is no row lock to skip")
    seed(db, "held", expires=10, lease=1, status="succeeded")
    seed(db, "free", expires=11, lease=1, status="succeeded")
    holder = connect()
    try:
        holder.execute("BEGIN")
        # By the whole key: InnoDB locks every row a locking read examines.
        holder.execute("""SELECT 1 FROM idempotency_record
                          WHERE scope = %(scope)s AND kind = %(kind)s AND key_id = %(key_id)s
                          FOR UPDATE""", {**KEY, "key_id": "held"})
        if db.dialect == "postgres":
            db.execute("SET lock_timeout = '2s'")
        else:
            db.execute("SET innodb_lock_wait_timeout = 2")
        assert cleanup(db, now=100) == 1
        assert remaining(db) == ["held"]
        holder.execute("COMMIT")
        assert cleanup(db, now=100) == 1
        assert remaining(db) == []
    finally:
        holder.close()


# --- transactions and concurrency --------------------------------------------------


def test_a_claim_inside_a_rolled_back_transaction_leaves_nothing(db):
    db.execute("BEGIN")
    assert claim(db)
    db.execute("ROLLBACK")
    assert load(db) is None


def test_concurrent_claims_of_one_key_insert_it_exactly_once(connect, db):
    workers, keys = 16, 10
    winners: dict[str, list[int]] = {f"race-{k}": [] for k in range(keys)}
    errors: list[BaseException] = []
    barrier = threading.Barrier(workers)

    def work(worker: int) -> None:
        conn = connect()
        try:
            barrier.wait()
            for key_id in winners:
                if claim(conn, {**KEY, "key_id": key_id}, now=worker):
                    winners[key_id].append(worker)
        except BaseException as error:  # reported below, with the others
            errors.append(error)
        finally:
            conn.close()

    threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert all(len(won) == 1 for won in winners.values()), winners
    for key_id, won in winners.items():
        assert load(db, {**KEY, "key_id": key_id})["created_millis"] == won[0]


@pytest.mark.parametrize("found_rows", [False, True], ids=["changed-rows", "found-rows"])
def test_mysql_claim_reads_alike_with_and_without_client_found_rows(connect, db, found_rows):
    if db.dialect != "mysql":
        pytest.skip("affected rows are read only on MySQL/MariaDB")
    flags = pymysql.constants.CLIENT.FOUND_ROWS if found_rows else 0
    conn = connect(client_flag=flags)
    try:
        assert claim(conn)
        # A duplicate is an error whatever the flag, never "one row affected".
        assert not claim(conn)
        assert not claim(db)
        # A claim whose own lease ended changes nothing: 0 rows, not an error.
        assert not claim(conn, {**KEY, "key_id": "late"}, now=1000, lease=2000, written_at=2000)
        # Every other write changes its row, so found rows read as changed rows.
        assert complete(conn) == 1
        assert complete(conn) == 0
    finally:
        conn.close()


# --- renew -------------------------------------------------------------------------


def renew(db: Db, key=KEY, *, token=1, created=1000, now=1500, lease=2500) -> int:
    return db.run("renew", **key, fencing_token=token, created_millis=created,
                  now_millis=now, lease_deadline_millis=lease)


def test_renew_moves_a_pending_claims_deadline_forward_only(db):
    assert claim(db)
    assert renew(db, lease=2500) == 1
    assert load(db)["lease_deadline_millis"] == 2500
    assert renew(db, lease=2500) == 0, "the same deadline again changes no row"
    assert renew(db, lease=2400) == 0, "a deadline is never moved back"
    assert load(db)["lease_deadline_millis"] == 2500


def test_renew_with_a_stale_fence_or_after_completion_changes_no_row(db):
    assert claim(db)
    assert renew(db, token=2) == 0
    assert renew(db, created=999) == 0
    assert complete(db) == 1
    assert renew(db, lease=9000) == 0
    assert load(db)["lease_deadline_millis"] == 2000


def test_a_renewed_lease_is_not_reclaimed(db):
    assert claim(db)
    assert renew(db, now=1900, lease=2900) == 1
    assert reclaim(db, now=2000, lease=3000) == 0
    assert reclaim(db, now=2900, lease=3900) == 1


@pytest.mark.parametrize("first_commits", [True, False], ids=["commit", "rollback"])
def test_a_claim_waits_for_a_concurrent_uncommitted_claim_of_the_key(connect, db, first_commits):
    if db.dialect == "sqlite":
        pytest.skip("SQLite serialises writers: the second writer waits for the lock instead")
    first = connect()
    outcome: list[bool] = []
    try:
        first.execute("BEGIN")
        assert claim(first)
        second = threading.Thread(target=lambda: outcome.append(claim(db, now=1001)))
        second.start()
        second.join(timeout=0.5)
        assert second.is_alive(), "the second claim did not wait"
        first.execute("COMMIT" if first_commits else "ROLLBACK")
        second.join(timeout=10)
        assert outcome == [not first_commits]
        assert load(db)["created_millis"] == (1000 if first_commits else 1001)
    finally:
        first.close()
