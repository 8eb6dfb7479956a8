"""The adapters' own API beyond the conformance files: the shipped SQL, the
background threads (lease heartbeat, segment prefetch), the ways a database
that is down shows, and the driver options refused."""

from __future__ import annotations

import pathlib
import time

import pytest
from pymysql.constants import CLIENT

from mintid import (
    Fingerprint,
    IdempotencyKey,
    LeaseExpiredError,
    LeasePolicy,
    RecordPolicy,
    RelayPolicy,
    SegmentPolicy,
)
from mintid.store import (
    IdempotencyStore,
    LeasedSnowflake,
    MySqlDatabase,
    Outbox,
    OutboxMessage,
    RecordLease,
    SegmentIds,
    StaleSnapshotError,
    StoredResponse,
    StoreRequest,
    StoreUnavailableError,
    WorkerLeases,
)
from mintid.store._sql import load_migrations, load_queries
from store.store_support import Server, databases

SCHEMA = pathlib.Path(__file__).resolve().parents[3] / "schema"


@pytest.mark.parametrize("dialect", ["postgres", "mysql", "sqlite"])
def test_the_package_ships_every_file_of_schema(dialect: str) -> None:
    # The wheel holds schema/ through links: a new file there needs its link.
    files = sorted(path.name for path in (SCHEMA / dialect).glob("*.sql"))
    shipped = [name for name, _ in load_migrations(dialect)] + ["queries.sql"]  # type: ignore[arg-type]
    assert sorted(shipped) == files
    queries = load_queries(dialect, "named")  # type: ignore[arg-type]
    assert {"claim", "load", "complete", "lease_find", "segment_fetch", "outbox_claim"} <= set(
        queries
    )
    assert all(":" not in q.sql.replace(":", "") for q in queries.values())
    assert "%(scope)s" in load_queries(dialect, "pyformat")["claim"].sql  # type: ignore[arg-type]


def test_mysql_refuses_client_found_rows() -> None:
    with pytest.raises(ValueError, match="FOUND_ROWS"):
        MySqlDatabase("mysql://u@127.0.0.1:1/x", client_flag=CLIENT.FOUND_ROWS)


def test_leased_snowflake_renews_in_the_background_and_releases_on_close(server: Server) -> None:
    policy = LeasePolicy(
        "classic",
        lease_ms=600,
        renew_interval_ms=100,
        safety_margin_ms=200,
        renew_retry_ms=50,
        max_skew_ms=10,
        max_start_wait_ms=1000,
    )
    with databases(server.fresh()) as make:
        leases = WorkerLeases(make(), policy)
        leases.database.migrate()
        with LeasedSnowflake.acquire(leases, "pod-a") as generator:
            first = generator.next_id()
            time.sleep(0.9)  # longer than the lease: only the heartbeat keeps it
            second = generator.next_id()
            assert second > first
            row = leases.load(generator.worker_id)
            assert row is not None and row.owner == "pod-a"
            assert generator.guard.lease_deadline_ms > generator.guard.start_after_ms + 600
        row = leases.load(generator.worker_id)
        assert row is not None and row.owner is None
        issued_ms = policy.layout.decode(second).unix_ms
        assert row.high_water_ms >= issued_ms
        with LeasedSnowflake.acquire(leases, "pod-b") as successor:
            assert successor.worker_id == generator.worker_id
            assert successor.next_id() > second


def test_leased_snowflake_stops_when_it_cannot_renew(tmp_path: pathlib.Path) -> None:
    server = Server("sqlite", tmp_path)
    policy = LeasePolicy(
        "classic", lease_ms=400, renew_interval_ms=100, safety_margin_ms=100, renew_retry_ms=50
    )
    with databases(server.fresh()) as make:
        database = make()
        leases = WorkerLeases(database, policy)
        database.migrate()
        generator = LeasedSnowflake.acquire(leases, "pod-a")
        generator.next_id()
        leases.database = server.unavailable()  # the database goes away
        time.sleep(0.45)
        with pytest.raises(LeaseExpiredError):
            generator.next_id()
        with pytest.raises(StoreUnavailableError):
            generator.close()  # the release cannot be written: the lease ends at its deadline
        assert generator.close() is False


def test_segment_ids_prefetch_in_the_background(server: Server) -> None:
    policy = SegmentPolicy(100, 100, 1000, fetch_at_percent=10)
    with databases(server.fresh()) as make:
        database = make()
        database.migrate()
        ids = SegmentIds(database, "orders", policy)
        drawn = [ids.next_id() for _ in range(2500)]
        assert drawn == sorted(set(drawn))
        assert drawn[0] == 1


def test_a_database_that_is_down_is_store_unavailable_everywhere(tmp_path: pathlib.Path) -> None:
    down = Server("sqlite", tmp_path).unavailable()
    key = IdempotencyKey("order.create", "tenant-1", "k-1")
    request = StoreRequest(Fingerprint(bytes(32)))
    ran: list[int] = []

    def operation() -> StoredResponse:
        ran.append(1)
        return StoredResponse("text/plain", b"x")

    store = IdempotencyStore(down, RecordPolicy())
    for action in (
        lambda: store.run_once(key, request, operation),
        lambda: store.claim_lease(key, request),
        lambda: store.load(key),
        lambda: WorkerLeases(down, LeasePolicy()).acquire("pod"),
        lambda: SegmentIds(down, "t", SegmentPolicy(10, 10, 10)).next_id(),
        lambda: Outbox(down, RelayPolicy(10, 1000)).claim(),
    ):
        with pytest.raises(StoreUnavailableError) as raised:
            action()
        assert raised.value.code == "store.unavailable"
        assert raised.value.__cause__ is not None
    assert ran == []


def test_an_error_that_is_not_the_connection_is_the_drivers_own(server: Server) -> None:
    # A database that is up but not migrated: not "unavailable" (no 503 to retry),
    # the driver's error for the missing table, unchanged.
    with databases(server.fresh()) as make:
        store = IdempotencyStore(make(), RecordPolicy())
        with pytest.raises(Exception) as raised:
            store.load(IdempotencyKey("order.create", "tenant-1", "k-1"))
        assert not isinstance(raised.value, StoreUnavailableError)
        assert "idempotency_record" in str(raised.value)


def test_a_claim_in_an_old_snapshot_is_a_stale_snapshot_error(server: Server) -> None:
    if server.dialect != "mysql":
        pytest.skip("only MySQL/MariaDB REPEATABLE READ keeps a snapshot across statements")
    key = IdempotencyKey("order.create", "tenant-1", "k-1")
    request = StoreRequest(Fingerprint(bytes(32)))
    with databases(server.fresh()) as make:
        database = make()
        database.migrate()
        store = IdempotencyStore(database, RecordPolicy())
        ran: list[int] = []
        with database.transaction() as raw:
            database.execute(raw, "SELECT COUNT(*) FROM idempotency_record")
            store.run_once(key, request, lambda: StoredResponse("text/plain", b"first"))

            def operation(_raw: object) -> StoredResponse:
                ran.append(1)
                return StoredResponse("text/plain", b"second")

            with pytest.raises(StaleSnapshotError) as raised:
                store.in_transaction(raw, key, request, operation)
            assert raised.value.code == "store.stale_snapshot"
        assert ran == []
        replay = store.run_once(key, request, lambda: operation(None))
        assert replay.decision == "replay"
        assert ran == []


def test_outbox_enqueue_and_relay(tmp_path: pathlib.Path) -> None:
    with databases(Server("sqlite", tmp_path).fresh()) as make:
        database = make()
        database.migrate()
        outbox = Outbox(database, RelayPolicy(10, 60_000))
        with database.transaction(write=True) as raw:
            assert outbox.enqueue(raw, OutboxMessage(1, "order.created", "o-1", b"{}")) == "new"
            again = outbox.enqueue(raw, OutboxMessage(2, "order.created", "o-1", b"{}"))
            assert again == "already_enqueued"
        sent: list[int] = []
        report = outbox.relay(lambda message: sent.append(message.message_id))
        assert sent == [1] and report.sent == 1
        assert outbox.cleanup(sent_before_ms=time.time_ns() // 1_000_000 + 1) == 1


def test_lease_and_fence(tmp_path: pathlib.Path) -> None:
    with databases(Server("sqlite", tmp_path).fresh()) as make:
        database = make()
        database.migrate()
        store = IdempotencyStore(database, RecordPolicy(lease_ms=60_000))
        key = IdempotencyKey("payment.capture", "tenant-1", "p-1")
        lease = store.claim_lease(key, StoreRequest(Fingerprint(bytes(32))))
        assert isinstance(lease, RecordLease)
        lease.complete(StoredResponse("application/json", b'{"ok":true}'))
        replay = store.claim_lease(key, StoreRequest(Fingerprint(bytes(32))))
        assert not isinstance(replay, RecordLease)
        assert replay.decision == "replay"
        assert replay.response == StoredResponse("application/json", b'{"ok":true}')
