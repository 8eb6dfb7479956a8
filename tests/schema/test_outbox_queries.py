"""The outbox queries (outbox_*) of every dialect, at the SQL level: enqueueing once per
business key, claiming due messages, marking them under the claim token, and relays
working at once."""

import threading

import pymysql
import pytest

from conftest import Db


@pytest.fixture
def db(connect):
    """A connection to an emptied outbox_message table."""
    db = connect()
    db.execute("DELETE FROM outbox_message")
    yield db
    db.close()


def enqueue(db: Db, message_id: int, key: str, *, kind="order.created", payload=b"{}",
            now=1000) -> int:
    return db.run("outbox_enqueue", message_id=message_id, kind=kind, business_key=key,
                  payload=payload, now_millis=now)


def duplicate(db: Db, message_id: int, key: str, **kwargs) -> bool:
    """Whether an enqueue met an existing row: 0 rows, or on MySQL/MariaDB (a plain INSERT,
    right with or without CLIENT_FOUND_ROWS) the duplicate-key error 1062."""
    if db.dialect != "mysql":
        return enqueue(db, message_id, key, **kwargs) == 0
    with pytest.raises(pymysql.err.IntegrityError) as raised:
        enqueue(db, message_id, key, **kwargs)
    return raised.value.args[0] == 1062


def load(db: Db, key: str, kind="order.created") -> dict | None:
    row = db.run("outbox_load", kind=kind, business_key=key)
    if row is not None:
        row["payload"] = bytes(row["payload"])
        for column in ("kind", "business_key"):
            if isinstance(row[column], (bytes, bytearray)):
                row[column] = row[column].decode()
    return row


def claim(db: Db, token: int, *, now: int, until: int, batch=10) -> list[int]:
    """Claims a batch and returns the claimed message ids."""
    count = db.run("outbox_claim", claim_token=token, claimed_until_millis=until,
                   now_millis=now, batch_size=batch)
    rows = db.run("outbox_claimed", claim_token=token)
    assert len(rows) == count
    return [row["message_id"] for row in rows]


def mark_sent(db: Db, message_id: int, token: int, *, now=2000) -> int:
    return db.run("outbox_mark_sent", message_id=message_id, claim_token=token, now_millis=now)


def test_enqueue_once_per_business_key(db):
    assert enqueue(db, 101, "order-1", payload=b'{"n":1}') == 1
    assert duplicate(db, 102, "order-1", payload=b'{"n":2}'), "already enqueued"
    assert enqueue(db, 103, "order-1", kind="order.paid") == 1, "another kind"
    row = load(db, "order-1")
    assert row == {
        "message_id": 101, "kind": "order.created", "business_key": "order-1",
        "payload": b'{"n":1}', "status": "pending", "attempts": 0,
        "next_attempt_millis": 1000, "claim_token": 0, "last_error": None,
        "created_millis": 1000, "updated_millis": 1000,
    }
    assert load(db, "order-2") is None


def test_a_message_id_used_by_another_message_is_an_error(db):
    assert enqueue(db, 101, "order-1") == 1
    assert duplicate(db, 101, "order-1"), "the same message again"
    with pytest.raises(Exception):
        enqueue(db, 101, "order-2")
    if db.dialect == "postgres" and db.conn.info.transaction_status != 0:
        db.conn.rollback()
    assert load(db, "order-2") is None


def test_an_enqueue_rolled_back_with_its_business_transaction_leaves_nothing(db):
    db.execute("BEGIN")
    assert enqueue(db, 101, "order-1") == 1
    db.execute("ROLLBACK")
    assert load(db, "order-1") is None
    assert enqueue(db, 101, "order-1") == 1


@pytest.mark.parametrize("key", ["o'brien", "a;DROP TABLE outbox_message;--", "100%", "a_c",
                                 ":key", "?", "clé ünïcode"])
def test_business_keys_are_stored_literally(db, key):
    assert enqueue(db, 7, key) == 1
    assert load(db, key)["business_key"] == key
    assert duplicate(db, 8, key)


def test_limits_are_checked(db):
    assert enqueue(db, 1, "k" * 255, kind="k" * 64, payload=b"x" * 1048576) == 1
    for message_id, kwargs in enumerate([{"key": "k" * 256}, {"key": "k", "kind": "k" * 65},
                                         {"key": "k", "payload": b"x" * 1048577},
                                         {"key": ""}], start=2):
        with pytest.raises(Exception):
            enqueue(db, message_id, **kwargs)
        if db.dialect == "postgres" and db.conn.info.transaction_status != 0:
            db.conn.rollback()


def test_claim_takes_due_pending_messages_oldest_due_first(db):
    for n in range(5):
        enqueue(db, 100 + n, f"order-{n}", now=1000 + n)
    enqueue(db, 200, "later", now=5000)
    assert claim(db, 11, now=1002, until=61002, batch=2) == [100, 101]
    assert claim(db, 12, now=1004, until=61004, batch=10) == [102, 103, 104]
    assert claim(db, 13, now=1004, until=61004) == [], "claimed messages are not due"
    row = load(db, "order-0")
    assert (row["claim_token"], row["next_attempt_millis"], row["attempts"],
            row["updated_millis"]) == (11, 61002, 1, 1002)
    # A relay that died: its claim ends, the messages are due again, one attempt more.
    assert claim(db, 14, now=61002, until=121002) == [100, 101, 200]
    assert load(db, "order-0")["attempts"] == 2
    assert mark_sent(db, 100, 11) == 0, "the dead relay's claim is lost"
    assert claim(db, 15, now=61004, until=121004) == [102, 103, 104]


def test_marks_are_guarded_by_the_claim_token(db):
    enqueue(db, 1, "a")
    enqueue(db, 2, "b")
    enqueue(db, 3, "c")
    assert claim(db, 7, now=1000, until=2000) == [1, 2, 3]
    assert mark_sent(db, 1, 8) == 0
    assert mark_sent(db, 1, 7, now=2500) == 1, "accepted after the claim's end until reclaimed"
    assert mark_sent(db, 1, 7) == 0, "sent twice"
    assert db.run("outbox_mark_retry", message_id=2, claim_token=7, next_attempt_millis=9000,
                  last_error="timeout", now_millis=1500) == 1
    assert db.run("outbox_mark_dead", message_id=3, claim_token=7, last_error="rejected: «non»",
                  now_millis=1500) == 1
    assert db.run("outbox_mark_dead", message_id=2, claim_token=7, last_error="x",
                  now_millis=1500) == 0, "a released message is no longer the claim's"
    assert [(load(db, k)["status"], load(db, k)["claim_token"], load(db, k)["last_error"])
            for k in "abc"] == [("sent", 7, None), ("pending", 0, "timeout"),
                                ("dead", 7, "rejected: «non»")]
    assert claim(db, 9, now=8999, until=20000) == []
    assert claim(db, 9, now=9000, until=20000) == [2]
    assert load(db, "b")["attempts"] == 2


def test_cleanup_deletes_old_sent_messages_in_batches(db):
    for n in range(4):
        enqueue(db, n, f"k{n}")
    claim(db, 5, now=1000, until=2000)
    for n in range(3):
        assert mark_sent(db, n, 5, now=1100 + n) == 1
    db.run("outbox_mark_dead", message_id=3, claim_token=5, last_error="x", now_millis=1000)
    assert db.run("outbox_cleanup", sent_before_millis=1101, batch_size=1) == 1
    assert db.run("outbox_cleanup", sent_before_millis=1101, batch_size=5) == 1
    assert db.run("outbox_cleanup", sent_before_millis=99999, batch_size=5) == 1
    assert [row[0] for row in db.execute("SELECT message_id FROM outbox_message")] == [3]


def test_relays_at_once_send_every_message_exactly_once(connect, db):
    messages, relays = 300, 6
    for n in range(messages):
        enqueue(db, n + 1, f"event-{n}")
    sent: list[int] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(relays)

    def relay(n: int) -> None:
        conn = connect()
        try:
            barrier.wait()
            token = n + 1
            while True:
                batch = claim(conn, token, now=5000, until=10**12, batch=7)
                if not batch:
                    return
                for message_id in batch:
                    assert mark_sent(conn, message_id, token) == 1
                    sent.append(message_id)
        except BaseException as error:  # reported below
            errors.append(error)
        finally:
            conn.close()

    threads = [threading.Thread(target=relay, args=(n,)) for n in range(relays)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert sorted(sent) == list(range(1, messages + 1))


def test_claim_skips_messages_another_claim_holds(connect, db):
    if db.dialect == "sqlite":
        pytest.skip("SQLite serialises writers: the second claim waits for the lock")
    enqueue(db, 1, "a")
    enqueue(db, 2, "b")
    first = connect()
    try:
        first.execute("BEGIN")
        assert first.run("outbox_claim", claim_token=1, claimed_until_millis=9000,
                         now_millis=1000, batch_size=1) == 1
        if db.dialect == "postgres":
            db.execute("SET lock_timeout = '2s'")
        else:
            db.execute("SET innodb_lock_wait_timeout = 2")
        # Never the held message, and no wait. InnoDB also locks the index records its
        # scan passed, so MariaDB may skip message 2 as well until the first commits.
        skipped = claim(db, 2, now=1000, until=9000)
        assert skipped == [2] or (db.dialect == "mysql" and skipped == [])
        first.execute("COMMIT")
        if not skipped:
            assert claim(db, 3, now=1000, until=9000) == [2]
    finally:
        first.close()


def test_mysql_enqueue_reads_the_same_with_and_without_client_found_rows(connect, db):
    if db.dialect != "mysql":
        pytest.skip("affected rows are read only on MySQL/MariaDB")
    found_rows = connect(client_flag=pymysql.constants.CLIENT.FOUND_ROWS)
    try:
        assert enqueue(found_rows, 1, "a") == 1
        assert duplicate(db, 2, "a")
        assert duplicate(found_rows, 2, "a"), "a duplicate is the duplicate-key error with the flag"
    finally:
        found_rows.close()


def test_release_gives_back_the_unsent_messages_of_a_claim_only(db):
    for n, key in enumerate("abc", start=1):
        enqueue(db, n, key)
    assert claim(db, 7, now=1000, until=61000) == [1, 2, 3]
    assert mark_sent(db, 1, 7) == 1
    assert claim(db, 8, now=61000, until=121000) == [2, 3], "the claim ended"
    assert db.run("outbox_release", claim_token=7, now_millis=61500) == 0, "not 7's any more"
    assert db.run("outbox_release", claim_token=8, now_millis=61500) == 2
    row = load(db, "b")
    assert (row["claim_token"], row["attempts"], row["next_attempt_millis"]) == (0, 1, 61500)
    assert load(db, "a")["status"] == "sent"
