"""The adapters' own API beyond the conformance files: the core's statements,
the background threads (lease heartbeat, segment prefetch, record renewal),
the ways a database that is down shows, and fork safety."""

from __future__ import annotations

import os
import pathlib
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import pytest

from mintid import (
    Fingerprint,
    IdempotencyKey,
    IdempotencyKeyError,
    LeaseExpiredError,
    LeasePolicy,
    Problem,
    RecordPolicy,
    RecordStaleTokenError,
    RelayPolicy,
    SegmentPolicy,
)
from mintid.errors import error_class
from mintid.store import (
    Database,
    IdempotencyStore,
    MySqlDatabase,
    OperationError,
    Outbox,
    OutboxMessage,
    PostgresDatabase,
    RecordLease,
    SegmentIds,
    SqliteDatabase,
    StaleSnapshotError,
    StoredResponse,
    StoreError,
    StoreRequest,
    StoreSchemaMissingError,
    StoreUnavailableError,
    WorkerLeases,
)
from mintid.store._database import text
from store.store_support import SYNC, Kit, Server, databases


@pytest.mark.parametrize(
    ("database", "placeholder"),
    [
        (lambda: SqliteDatabase(":memory:"), "?"),
        (lambda: PostgresDatabase("postgresql://u@127.0.0.1:1/x"), "%s"),
        (lambda: MySqlDatabase("mysql://u@127.0.0.1:1/x"), "%s"),
    ],
)
def test_statements_come_from_the_core_in_the_drivers_style(
    database: Callable[[], Database], placeholder: str
) -> None:
    # Nothing connects: the statements and migrations are the core's manifest.
    statements = database().statements
    claim = statements["claim"]
    assert claim.params[:3] == ["scope", "kind", "key_id"]
    assert claim.sql.count(placeholder) == len(claim.params)
    assert {"claim", "load", "renew", "lease_find", "segment_fetch", "outbox_claim"} <= set(
        statements
    )


def kit_of(flavour: str) -> Kit:
    """The sync stores, or the async ones behind sync views (their tasks on a loop thread)."""
    from store.async_support import AsyncKit

    return SYNC if flavour == "sync" else AsyncKit()


@contextmanager
def leased(kit: Kit, server: Server, policy: LeasePolicy) -> Iterator[tuple[Any, Any]]:
    """Leases on a fresh database of ``server`` and a generator ``pod-a`` holds."""
    with kit.databases(server) as make:
        database = make()
        leases = kit.leases(database, policy)
        database.migrate()
        yield leases, kit.leased(leases, "pod-a", None)


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_leased_snowflake_renews_in_the_background_and_releases_on_close(
    server: Server, flavour: str
) -> None:
    policy = LeasePolicy(
        "classic",
        lease_millis=600,
        renew_interval_millis=100,
        safety_margin_millis=200,
        renew_retry_millis=50,
        max_skew_millis=10,
        max_start_wait_millis=1000,
    )
    kit = kit_of(flavour)
    with leased(kit, server, policy) as (leases, generator):
        try:
            first = generator.next_id()
            time.sleep(0.9)  # longer than the lease: only the heartbeat keeps it
            second = generator.next_id()
            assert second > first
            row = leases.load(generator.worker_id)
            assert row is not None and row.owner == "pod-a"
            assert generator.guard.lease_deadline_millis > generator.guard.start_after_millis + 600
        finally:
            generator.close()
        row = leases.load(generator.worker_id)
        assert row is not None and row.owner is None
        issued_millis = policy.layout.decode(second).unix_millis
        assert row.high_water_millis >= issued_millis
        successor = kit.leased(leases, "pod-b", None)
        try:
            assert successor.worker_id == generator.worker_id
            assert successor.next_id() > second
        finally:
            successor.close()


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_leased_snowflake_stops_when_it_cannot_renew(tmp_path: pathlib.Path, flavour: str) -> None:
    server = Server("sqlite", tmp_path)
    policy = LeasePolicy(
        "classic",
        lease_millis=400,
        renew_interval_millis=100,
        safety_margin_millis=100,
        renew_retry_millis=50,
    )
    kit = kit_of(flavour)
    with leased(kit, server, policy) as (leases, generator):
        generator.next_id()
        leases.database = kit.unavailable(server)  # the database goes away
        time.sleep(0.45)
        with pytest.raises(LeaseExpiredError):
            generator.next_id()
        with pytest.raises(StoreUnavailableError):
            generator.close()  # the release cannot be written: the lease ends at its deadline
        assert generator.close() is False


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_segment_ids_prefetch_in_the_background(server: Server, flavour: str) -> None:
    policy = SegmentPolicy(100, 100, 1000, fetch_at_percent=10)
    kit = kit_of(flavour)
    with kit.databases(server) as make:
        database = make()
        database.migrate()
        ids = kit.segments(database, "orders", policy)
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
        lambda: Outbox(down, RelayPolicy(10, 1000)).relay(lambda _message: None),
    ):
        with pytest.raises(StoreUnavailableError) as raised:
            action()
        assert raised.value.code == "store.unavailable"
        assert raised.value.__cause__ is not None
    assert ran == []


def test_a_database_never_migrated_is_schema_missing_naming_migrate(
    server: Server,
) -> None:
    # A database that is up but not migrated: not "unavailable" nor any query failure, but
    # its own error naming the fix; the driver's text (which names the table) is the
    # cause, never the message.
    with databases(server.fresh()) as make:
        store = IdempotencyStore(make(), RecordPolicy())
        with pytest.raises(StoreSchemaMissingError) as raised:
            store.load(IdempotencyKey("order.create", "tenant-1", "k-1"))
        assert raised.value.code == "store.schema_missing"
        assert "db.migrate()" in raised.value.message
        assert raised.value.part == "schema_missing"
        assert raised.value.problem is Problem.STORAGE_UNAVAILABLE
        assert "idempotency_record" not in raised.value.message
        assert "idempotency_record" in str(raised.value.__cause__)


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
        assert outbox.cleanup(sent_before_millis=time.time_ns() // 1_000_000 + 1) == 1


def test_lease_and_fence(tmp_path: pathlib.Path) -> None:
    with databases(Server("sqlite", tmp_path).fresh()) as make:
        database = make()
        database.migrate()
        store = IdempotencyStore(database, RecordPolicy(lease_millis=60_000))
        key = IdempotencyKey("payment.capture", "tenant-1", "p-1")
        lease = store.claim_lease(key, StoreRequest(Fingerprint(bytes(32))))
        assert isinstance(lease, RecordLease)
        lease.complete(StoredResponse("application/json", b'{"ok":true}'))
        replay = store.claim_lease(key, StoreRequest(Fingerprint(bytes(32))))
        assert not isinstance(replay, RecordLease)
        assert replay.decision == "replay"
        assert replay.response == StoredResponse("application/json", b'{"ok":true}')


def side_effects_per_key(server: Server, database: Database) -> dict[str, int]:
    with database.connection() as raw:
        cursor = raw.cursor()
        cursor.execute("SELECT key_id, COUNT(*) FROM conformance_side_effect GROUP BY key_id")
        counts = {text(key): int(count) for key, count in cursor.fetchall()}
        cursor.close()
    return counts


def counting(server: Server, database: Database, key: IdempotencyKey, who: str) -> StoredResponse:
    """An operation's side effect: one row per run."""
    mark = "?" if server.dialect == "sqlite" else "%s"
    with database.connection() as raw:
        database.execute(
            raw,
            f"INSERT INTO conformance_side_effect (scope, kind, key_id, worker) "
            f"VALUES ({mark}, {mark}, {mark}, {mark})",
            (key.scope, key.kind, key.id, who),
        )
    return StoredResponse("text/plain", who.encode())


def test_a_store_used_before_fork_serves_parent_and_child_each_key_once(server: Server) -> None:
    keys = [IdempotencyKey("order.create", "tenant-1", f"k-{n}") for n in range(40)]
    request = StoreRequest(Fingerprint(bytes(32)))
    with databases(server.fresh()) as make:
        database = make()
        database.migrate()
        server.business_table(database)
        store = IdempotencyStore(database, RecordPolicy(max_wait_millis=5_000, poll_millis=5))
        warm = IdempotencyKey("order.create", "tenant-1", "before-fork")
        store.run_once(warm, request, lambda: counting(server, database, warm, "parent"))
        with database.connection() as inherited:  # idle in the pool at the fork
            pass
        pid = os.fork()
        who = "child" if pid == 0 else "parent"
        failed = None
        try:
            # Both race on the same keys, on the one store object each inherited.
            for key in keys:
                result = store.run_once(key, request, partial(counting, server, database, key, who))
                assert result.decision in ("execute", "replay")
        except BaseException as error:
            failed = error
        if pid == 0:
            os._exit(0 if failed is None else 1)
        assert os.waitpid(pid, 0)[1] == 0, "the child failed"
        if failed is not None:
            raise failed
        # The child forgot the parent's connection without closing its session.
        cursor = inherited.cursor()
        cursor.execute("SELECT 1")
        assert [tuple(row) for row in cursor.fetchall()] == [(1,)]
        cursor.close()
        counts = side_effects_per_key(server, database)
        assert counts == {key.id: 1 for key in [warm, *keys]}
        after = IdempotencyKey("order.create", "tenant-1", "after-fork")
        ran = store.run_once(after, request, lambda: counting(server, database, after, "parent"))
        assert ran.decision == "execute"
        assert store.run_once(warm, request, lambda: StoredResponse("", b"")).decision == "replay"


def test_run_once_renews_its_lease_and_tells_the_operation_it_lost_it(server: Server) -> None:
    key = IdempotencyKey("order.create", "tenant-1", "k-1")
    request = StoreRequest(Fingerprint(bytes(32)))
    with databases(server.fresh()) as make:
        database = make()
        database.migrate()
        store = IdempotencyStore(database, RecordPolicy(lease_millis=300))
        seen: list[int] = []

        def stored_deadline() -> int:
            stored = store.load(key)
            assert stored is not None
            return stored.record.lease_deadline_millis

        def slow() -> StoredResponse:
            lease = RecordLease.current()
            assert lease is not None and not lease.lost
            first = lease.lease_deadline_millis
            deadline = time.monotonic() + 10
            # The heartbeat renews the stored record, and the lease's deadline moves with it.
            while lease.lease_deadline_millis == first and time.monotonic() < deadline:
                time.sleep(0.02)
            seen.append(lease.lease_deadline_millis - first)
            assert lease.lease_deadline_millis <= stored_deadline()
            # Another holder takes the key over (a newer token), as after a lost lease.
            mark = "?" if server.dialect == "sqlite" else "%s"
            with database.connection() as raw:
                database.execute(
                    raw,
                    "UPDATE idempotency_record SET fencing_token = fencing_token + 1 "
                    f"WHERE key_id = {mark}",
                    (key.id,),
                )
            while not lease.lost and time.monotonic() < deadline:
                time.sleep(0.02)
            assert lease.lost
            with pytest.raises(TypeError):
                lease.complete(StoredResponse("text/plain", b"x"))  # run_once completes it
            return StoredResponse("text/plain", b"late")

        with pytest.raises(RecordStaleTokenError):
            store.run_once(key, request, slow)
        assert seen and seen[0] > 0
        assert RecordLease.current() is None


def test_every_store_code_of_the_core_has_its_class() -> None:
    source = (pathlib.Path(__file__).resolve().parents[3] / "core/src/store/error.rs").read_text()
    codes = set(re.findall(r'"(store\.[a-z_]+)"', source))
    assert len(codes) == 10  # with store.schema_missing
    for code in codes:
        cls = error_class(code)
        assert issubclass(cls, StoreError) and cls is not StoreError, code
        assert code == cls.CODE


def test_a_lone_surrogate_in_free_text_is_stored_as_u_fffd_in_a_key_refused(
    tmp_path: pathlib.Path,
) -> None:
    """An operation's error message is free text: a lone surrogate is written as U+FFFD (as JS
    and Kotlin write it), never an encoding error; a key part with one is refused by the core."""
    with pytest.raises(IdempotencyKeyError) as refused:
        IdempotencyKey("order.create", "user:1", "a\ud800")
    assert refused.value.code == "key.invalid_character"
    with databases(Server("sqlite", tmp_path).fresh()) as make:
        database = make()
        database.migrate()
        store = IdempotencyStore(database, RecordPolicy())
        key = IdempotencyKey("order.create", "user:1", "lone-surrogate")
        request = StoreRequest(Fingerprint(bytes(32)))

        def fails() -> StoredResponse:
            raise OperationError("bad \ud800 input", retryable=False)

        with pytest.raises(OperationError):
            store.run_once(key, request, fails)
        replay = store.run_once(key, request, fails)
        assert (replay.decision, replay.error) == ("replay", "bad \ufffd input")


def test_a_lone_surrogate_in_an_error_text_is_stored_as_the_replacement_character(
    server: Server,
) -> None:
    """A Python ``str`` can hold a lone surrogate, which UTF-8 cannot encode:
    an operation's error, a held lease's ``fail`` and an outbox send error
    with one never raise ``UnicodeEncodeError`` on the way to the core; the
    stored text has U+FFFD in its place, and the caller gets its own error.
    """
    request = StoreRequest(Fingerprint(bytes(32)))
    with databases(server.fresh()) as make:
        database = make()
        database.migrate()
        store = IdempotencyStore(database, RecordPolicy(max_wait_millis=0))
        declined = IdempotencyKey("order.create", "tenant-1", "surrogate")

        def operation() -> StoredResponse:
            raise OperationError("card declined \ud800 ref=7")

        with pytest.raises(OperationError) as raised:
            store.run_once(declined, request, operation)
        assert raised.value.message == "card declined \ud800 ref=7"
        stored = store.load(declined)
        assert stored is not None and stored.error == "card declined \ufffd ref=7"

        held = IdempotencyKey("order.create", "tenant-1", "lease")
        lease = store.claim_lease(held, request)
        assert isinstance(lease, RecordLease)
        lease.fail("timeout \udfff")
        stored = store.load(held)
        assert stored is not None and stored.error == "timeout \ufffd"

        outbox = Outbox(database, RelayPolicy(10, 60_000, max_attempts=1))
        with database.transaction(write=True) as raw:
            outbox.enqueue(raw, OutboxMessage(1, "event", "e-1", b"{}"))

        def send(_message: Any) -> None:
            raise RuntimeError("broker \ud83d down")

        report = outbox.relay(send)
        assert report.dead == 1
        message = outbox.load("event", "e-1")
        assert message is not None and message.last_error == "broker \ufffd down"
