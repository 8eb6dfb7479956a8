"""The stores' metrics and spans through OpenTelemetry (mintid.metrics) on
SQLite, PostgreSQL and MariaDB, read with the SDK's in-memory reader and
exporter: completions and response sizes, relay results, store errors of a
lost connection, renewals that found the record lost, refused request IDs at
the ASGI middleware, spans without secrets, the default recorder on the
global providers, and a registry the recorder does not cover. (The record
decisions of every conformance scenario are checked by its runner,
test_store_idempotency.py; the fast path's lookups by test_store_fast_path.py.)
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from mintid import (
    Fingerprint,
    IdempotencyKey,
    KeyRing,
    LeasePolicy,
    RecordPolicy,
    RelayPolicy,
    RequestId,
    SegmentPolicy,
)
from mintid._native import ffi
from mintid.http import HttpIdempotency
from mintid.http.asgi import IdempotencyMiddleware
from mintid.metrics import OpenTelemetryMetrics, covered
from mintid.store import (
    IdempotencyStore,
    OperationError,
    Outbox,
    OutboxMessage,
    RecordLease,
    RecordLostError,
    SegmentIds,
    StoredResponse,
    StoreMetrics,
    StoreRequest,
    StoreUnavailableError,
    WorkerLeases,
)
from mintid.store.aio import AsyncIdempotencyStore, AsyncWorkerLeases
from store.async_support import LoopThread
from store.metrics_support import Recording
from store.metrics_support import key_of as key
from store.store_support import ManualStoreClock, Server, databases

SCOPE = "tenant-secret-scope"
KEY_ID = "order-secret-id"
BODY = b'{"order":"secret-body"}'


def _request() -> StoreRequest:
    return StoreRequest(Fingerprint(bytes(range(32))))


def test_runs_count_completions_sizes_and_spans_without_secrets(server: Server) -> None:
    recording = Recording()
    with databases(server.fresh()) as make:
        database = make()
        database.migrate()
        store = IdempotencyStore(database, RecordPolicy(), metrics=recording.metrics)
        key_ = IdempotencyKey("order.create", SCOPE, KEY_ID)

        def operation() -> StoredResponse:
            return StoredResponse("application/json", BODY)

        assert store.run_once(key_, _request(), operation).decision == "execute"
        assert store.run_once(key_, _request(), operation).decision == "replay"
        failing = IdempotencyKey("order.create", SCOPE, "fails")

        def fail() -> StoredResponse:
            raise OperationError("secret failure text")

        with pytest.raises(OperationError):
            store.run_once(failing, _request(), fail)
        lease = store.claim_lease(IdempotencyKey("order.create", SCOPE, "leased"), _request())
        assert isinstance(lease, RecordLease)
        lease.complete(StoredResponse("text/plain", b"12345"))
        with database.transaction(write=True) as raw:
            done = store.in_transaction(
                raw, IdempotencyKey("order.create", SCOPE, "tx"), _request(), lambda _c: operation()
            )
        assert done.decision == "execute"

    assert recording.counts("mintid.record.decisions") == {
        key(decision="execute", way="run_once"): 2,
        key(decision="replay", way="run_once"): 1,
        key(decision="execute", way="lease"): 1,
        key(decision="execute", way="same_transaction"): 1,
    }
    # Each executed request's completion, the failed one's too (a stored final failure).
    assert recording.counts("mintid.record.complete.duration") == {
        key(way="run_once"): 2,
        key(way="lease"): 1,
        key(way="same_transaction"): 1,
    }
    assert recording.sums("mintid.record.response.size") == {
        key(way="run_once"): len(BODY),
        key(way="lease"): 5,
        key(way="same_transaction"): len(BODY),
    }
    operations = recording.spans("mintid.operation")
    assert sorted(str(dict(span.attributes or {})["way"]) for span in operations) == [
        "run_once",
        "run_once",
        "same_transaction",
    ]
    completes = recording.spans("mintid.complete")
    assert [dict(span.attributes or {})["decision"] for span in completes] == ["execute"] * 4
    for span in recording.spans():
        shown = json.dumps({"name": span.name, **dict(span.attributes or {})})
        for secret in (SCOPE, KEY_ID, "secret-body", "secret failure text"):
            assert secret not in shown, span.name


def test_a_relay_counts_sent_retried_and_dead(server: Server) -> None:
    recording = Recording()
    clock = ManualStoreClock(1_000_000)
    policy = RelayPolicy(max_attempts=2, base_backoff_millis=60_000, jitter_percent=0)
    with databases(server.fresh()) as make:
        database = make()
        database.migrate()
        outbox = Outbox(database, policy, clock=clock, metrics=recording.metrics)
        with database.transaction(write=True) as raw:
            outbox.enqueue(raw, OutboxMessage(1, "event", "ok", b"{}"))
            outbox.enqueue(raw, OutboxMessage(2, "event", "broken", b"{}"))

        def send(message: Any) -> None:
            if message.business_key == "broken":
                raise RuntimeError("the broker said no")

        first = outbox.relay(send)
        clock.set(1_000_000 + 120_000)
        second = outbox.relay(send)
    assert (first.sent, first.retried, first.dead) == (1, 1, 0)
    assert (second.sent, second.retried, second.dead) == (0, 0, 1)
    assert recording.counts("mintid.outbox.deliveries") == {
        key(result="sent"): 1,
        key(result="retried"): 1,
        key(result="dead"): 1,
    }


def test_a_killed_connection_counts_a_connection_lost_store_error(server: Server) -> None:
    if server.dialect == "sqlite":
        pytest.skip("SQLite has no server session to end")
    recording = Recording()
    with databases(server.fresh()) as make:
        database = make()
        database.migrate()
        store = IdempotencyStore(database, RecordPolicy(), metrics=recording.metrics)

        def operation() -> StoredResponse:
            return StoredResponse("text/plain", b"ok")

        store.run_once(IdempotencyKey("k", "s", "1"), _request(), operation)
        assert recording.counts("mintid.store.errors") == {}
        server.kill_connections()
        # The pooled connection is gone: its first statement fails, the core retries anew.
        result = store.run_once(IdempotencyKey("k", "s", "2"), _request(), operation)
    assert result.decision == "execute"
    assert recording.counts("mintid.store.errors") == {key(**{"class": "connection_lost"}): 1}


def test_an_unreachable_database_counts_store_errors_in_every_store(server: Server) -> None:
    recording = Recording()
    metrics = recording.metrics
    unreachable = server.unavailable()
    store = IdempotencyStore(unreachable, RecordPolicy(), metrics=metrics)
    with pytest.raises(StoreUnavailableError):
        store.run_once(IdempotencyKey("k", "s", "1"), _request(), lambda: StoredResponse("a", b""))
    with pytest.raises(StoreUnavailableError):
        WorkerLeases(unreachable, LeasePolicy(), metrics=metrics).acquire("host-1")
    with pytest.raises(StoreUnavailableError):
        SegmentIds(
            unreachable, "orders", SegmentPolicy(), background=False, metrics=metrics
        ).next_id()
    with pytest.raises(StoreUnavailableError):
        Outbox(unreachable, RelayPolicy(), metrics=metrics).relay(lambda _message: None)
    counted = recording.counts("mintid.store.errors")[key(**{"class": "connection_lost"})]
    assert counted >= 4
    assert recording.counts("mintid.record.decisions") == {}  # no claim decided

    async def asynchronously() -> None:
        database = server.unavailable_async()
        with pytest.raises(StoreUnavailableError):
            await AsyncWorkerLeases(database, LeasePolicy(), metrics=metrics).acquire("host-1")
        made = AsyncIdempotencyStore(database, RecordPolicy(), metrics=metrics)

        async def operation() -> StoredResponse:
            return StoredResponse("a", b"")

        with pytest.raises(StoreUnavailableError):
            await made.run_once(IdempotencyKey("k", "s", "1"), _request(), operation)

    loop = LoopThread()  # as the async runner's: aiosqlite's thread outlives a failed connect
    try:
        loop.call(asynchronously())
    finally:
        loop.stop()
    assert (
        recording.counts("mintid.store.errors")[key(**{"class": "connection_lost"})] >= counted + 2
    )


def test_a_renewal_that_finds_the_record_taken_over_counts_it_lost(server: Server) -> None:
    recording = Recording()
    clock = ManualStoreClock(1_000_000)
    policy = RecordPolicy(lease_millis=1_000)
    with databases(server.fresh()) as make:
        database = make()
        database.migrate()
        first = IdempotencyStore(database, policy, clock=clock, metrics=recording.metrics)
        second = IdempotencyStore(database, policy, clock=clock, metrics=recording.metrics)
        key_ = IdempotencyKey("k", "s", "1")
        held = first.claim_lease(key_, _request())
        assert isinstance(held, RecordLease)
        clock.set(1_000_000 + 5_000)
        taken = second.claim_lease(key_, _request())
        assert isinstance(taken, RecordLease)  # a takeover: the first lease has passed
        with pytest.raises(RecordLostError):
            held.renew()
        taken.complete(StoredResponse("text/plain", b"done"))
    assert recording.counts("mintid.record.lost") == {(): 1}
    assert recording.counts("mintid.record.decisions") == {key(decision="execute", way="lease"): 2}


def test_refused_request_ids_count_by_code_at_the_asgi_middleware(server: Server) -> None:
    recording = Recording()
    ring = KeyRing(1, os.urandom(32))
    other = KeyRing(1, os.urandom(32))
    minted = RequestId.mint(ring.issue_grant("user:ann", 2**46)).text
    forged = RequestId.mint(other.issue_grant("user:ann", 2**46)).text
    with databases(server.fresh()) as make:
        database = make()
        database.migrate()

        async def main() -> list[int]:
            made = server.async_factory()()
            store = AsyncIdempotencyStore(made, RecordPolicy(), metrics=recording.metrics)
            http = HttpIdempotency(store=store, scope=lambda _request: "user:ann", key_ring=ring)

            async def app(scope: Any, receive: Any, send: Any) -> None:
                await send({"type": "http.response.start", "status": 201, "headers": []})
                await send({"type": "http.response.body", "body": b"made"})

            middleware = IdempotencyMiddleware(app, http=http)
            statuses = []
            for header in (minted, forged, "not a request id", "(", minted):
                sent: list[dict[str, Any]] = []

                async def receive() -> dict[str, Any]:
                    return {"type": "http.request", "body": b"{}"}

                async def send(message: Any, sent: list[dict[str, Any]] = sent) -> None:
                    sent.append(message)

                headers = [(b"mintid-request-id", header.encode()), (b"content-type", b"a/b")]
                request = {"type": "http", "method": "POST", "path": "/o", "headers": headers}
                await middleware(request, receive, send)
                statuses.append(int(sent[0]["status"]))
            await made.close()
            return statuses

        statuses = asyncio.run(main())
    assert statuses == [201, 400, 400, 400, 201]
    rejected = recording.counts("mintid.request_id.rejected")
    assert sum(rejected.values()) == 3
    codes = {dict(k)["code"] for k in rejected}
    assert "request_id.bad_tag" in codes
    assert all(code.startswith(("request_id.", "key.")) for code in codes)
    assert recording.counts("mintid.record.decisions") == {
        key(decision="execute", way="run_once"): 1,
        key(decision="replay", way="run_once"): 1,
    }


def test_the_recorder_refuses_a_registry_it_does_not_cover() -> None:
    metrics, spans = list(ffi.metrics()), list(ffi.spans())
    covered(metrics, spans)  # the core's own registry is covered
    unknown = ffi.MetricInfo(
        name="mintid.record.unknown",
        kind="counter",
        unit="{request}",
        description="A metric no host records.",
        attributes=[],
        buckets=[],
    )
    with pytest.raises(RuntimeError, match=r"mintid\.record\.unknown"):
        covered([*metrics, unknown], spans)
    with pytest.raises(RuntimeError):
        covered(metrics[1:], spans)
    with pytest.raises(RuntimeError):
        covered(metrics, spans[1:])
    renamed = ffi.MetricAttributeInfo(name="scope", values=["x"])
    first = metrics[0]
    changed = [
        ffi.MetricInfo(
            name=first.name,
            kind=first.kind,
            unit=first.unit,
            description=first.description,
            attributes=[renamed],
            buckets=first.buckets,
        ),
        *metrics[1:],
    ]
    with pytest.raises(RuntimeError):
        covered(changed, spans)


def test_a_metrics_argument_must_be_a_hook() -> None:
    with pytest.raises(TypeError, match="StoreMetrics"):
        IdempotencyStore(None, RecordPolicy(), metrics=object())  # type: ignore[arg-type]


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONWARNINGS": "error::DeprecationWarning"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_default_is_the_global_providers_and_works_without_an_sdk(tmp_path: Any) -> None:
    # No SDK installed (no provider set): the stores record through the API's no-ops.
    shown = _python(
        f"""
        import mintid
        from mintid import IdempotencyKey, RecordPolicy, fingerprint_bytes
        from mintid.store import IdempotencyStore, SqliteDatabase, StoredResponse, StoreRequest
        db = SqliteDatabase({str(tmp_path / "a.sqlite3")!r})
        db.migrate()
        store = IdempotencyStore(db, RecordPolicy())
        request = StoreRequest(fingerprint_bytes(b"x"))
        for _ in range(2):
            store.run_once(IdempotencyKey("k", "s", "1"), request, lambda: StoredResponse("a", b""))
        print(type(store.metrics).__name__)
        """
    )
    assert shown == "OpenTelemetryMetrics"
    # An SDK installed after the store was made: what the store does from then on is recorded.
    counted = _python(
        f"""
        from opentelemetry import metrics
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from mintid import IdempotencyKey, RecordPolicy, fingerprint_bytes
        from mintid.store import IdempotencyStore, SqliteDatabase, StoredResponse, StoreRequest
        db = SqliteDatabase({str(tmp_path / "b.sqlite3")!r})
        db.migrate()
        store = IdempotencyStore(db, RecordPolicy())
        reader = InMemoryMetricReader()
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        request = StoreRequest(fingerprint_bytes(b"x"))
        for _ in range(3):
            store.run_once(IdempotencyKey("k", "s", "1"), request, lambda: StoredResponse("a", b""))
        data = reader.get_metrics_data()
        points = [
            (dict(p.attributes)["decision"], p.value)
            for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics
            if m.name == "mintid.record.decisions" for p in m.data.data_points
        ]
        print(sorted(points))
        """
    )
    assert counted == "[('execute', 1), ('replay', 2)]"


def test_without_opentelemetry_nothing_is_recorded_or_imported(tmp_path: Any) -> None:
    shown = _python(
        f"""
        import sys
        sys.modules["opentelemetry"] = None  # not installed
        import mintid
        from mintid import IdempotencyKey, RecordPolicy, fingerprint_bytes
        from mintid.store import IdempotencyStore, SqliteDatabase, StoredResponse, StoreMetrics
        from mintid.store import StoreRequest
        db = SqliteDatabase({str(tmp_path / "c.sqlite3")!r})
        db.migrate()
        store = IdempotencyStore(db, RecordPolicy())
        request = StoreRequest(fingerprint_bytes(b"x"))
        result = store.run_once(
            IdempotencyKey("k", "s", "1"), request, lambda: StoredResponse("a", b"b")
        )
        assert store.metrics is StoreMetrics.NONE
        print(result.decision, "mintid.metrics" in sys.modules)
        """
    )
    assert shown == "execute True"
    loaded = _python("import mintid, sys; print(sorted(m for m in sys.modules if 'opentel' in m))")
    assert loaded == "[]"


def test_store_metrics_none_turns_the_default_off() -> None:
    assert StoreMetrics.NONE.claim_span("run_once").__enter__()("execute") is None
    assert isinstance(OpenTelemetryMetrics(), StoreMetrics)
