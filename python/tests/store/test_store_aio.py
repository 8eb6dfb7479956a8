"""What only the asyncio store has: the renewal task, cancellation (of a run
and of a relay), its binding to one event loop and one process, and the
app's psycopg pool, on SQLite, PostgreSQL and MariaDB (the protocol's cases run through
test_store_idempotency_async.py).
"""

from __future__ import annotations

import asyncio
import pathlib
from collections.abc import Callable

import pytest

from mintid import Fingerprint, IdempotencyKey, RecordPolicy, RelayPolicy
from mintid.http import HttpIdempotency
from mintid.http.wsgi import IdempotencyMiddleware as WsgiIdempotency
from mintid.store import (
    ClaimedMessage,
    OutboxMessage,
    RunResult,
    StoredResponse,
    StoreRequest,
    SystemStoreClock,
)
from mintid.store.aio import (
    AsyncDatabase,
    AsyncIdempotencyStore,
    AsyncOutbox,
    AsyncPostgresDatabase,
    AsyncRecordLease,
    AsyncSqliteDatabase,
    LoopBindingError,
)
from store.store_support import Server, in_forked_child

REQUEST = StoreRequest(Fingerprint(bytes(32)))
RESPONSE = StoredResponse("text/plain", b"done")


def key(name: str) -> IdempotencyKey:
    return IdempotencyKey("order.create", "tenant-1", name)


def fresh(server: Server) -> Callable[[], AsyncDatabase]:
    server.fresh()
    made: Callable[..., AsyncDatabase] = server.async_factory()
    return made


def others() -> set[asyncio.Task[object]]:
    return asyncio.all_tasks() - {asyncio.current_task()}


def test_the_lease_is_renewed_by_a_task_while_the_operation_runs(server: Server) -> None:
    make = fresh(server)
    policy = RecordPolicy(lease_millis=600, max_wait_millis=0)

    async def main() -> None:
        database, other = make(), make()
        await database.migrate()
        store, second = (
            AsyncIdempotencyStore(database, policy),
            AsyncIdempotencyStore(other, policy),
        )
        seen: dict[str, object] = {}

        async def stored_deadline() -> int:
            stored = await second.load(key("renewed"))
            assert stored is not None
            return stored.record.lease_deadline_millis

        async def operation() -> StoredResponse:
            lease = AsyncRecordLease.current()
            assert lease is not None
            first = lease.lease_deadline_millis
            while lease.lease_deadline_millis == first:  # renewed by the store's task
                await asyncio.sleep(0.02)
            assert first < lease.lease_deadline_millis <= await stored_deadline()
            while store._clock.now_millis() <= first:  # the first lease has passed
                await asyncio.sleep(0.02)
            seen["during"] = await second.run_once(key("renewed"), REQUEST, operation)
            seen["lost"] = lease.lost
            return RESPONSE

        result = await store.run_once(key("renewed"), REQUEST, operation)
        assert result == RunResult("execute", RESPONSE)
        during = seen["during"]
        assert isinstance(during, RunResult) and during.decision == "in_progress"
        assert seen["lost"] is False
        assert not others(), "the renewal task outlived run_once"
        stored = await second.load(key("renewed"))
        assert stored is not None and stored.response == RESPONSE
        await database.close()
        await other.close()

    asyncio.run(main())


def test_a_cancelled_operation_releases_its_key(server: Server) -> None:
    make = fresh(server)

    async def main() -> None:
        database = make()
        await database.migrate()
        store = AsyncIdempotencyStore(database, RecordPolicy(max_wait_millis=0))
        started = asyncio.Event()

        async def forever() -> StoredResponse:
            started.set()
            await asyncio.Event().wait()
            raise AssertionError("never woken")

        task = asyncio.create_task(store.run_once(key("cancelled"), REQUEST, forever))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not others(), "the renewal task outlived the cancelled run_once"
        stored = await store.load(key("cancelled"))
        assert stored is not None and stored.error == "CancelledError"
        assert str(stored.record.status) == "failed_retryable", "the key was not released"

        async def done() -> StoredResponse:
            return RESPONSE

        again = await store.run_once(key("cancelled"), REQUEST, done)
        assert again == RunResult("execute", RESPONSE)
        await database.close()

    asyncio.run(main())


def test_a_run_cancelled_after_its_operation_returned_is_completed(server: Server) -> None:
    """The operation returns; its task is cancelled at once, while the store
    records the outcome: the record is completed all the same, the
    cancellation propagates after it, a duplicate replays, one side effect.
    """
    make = fresh(server)

    async def main() -> None:
        database = make()
        await database.migrate()
        store = AsyncIdempotencyStore(database, RecordPolicy(max_wait_millis=0))
        returned = asyncio.Event()
        effects: list[str] = []

        async def operation() -> StoredResponse:
            effects.append("charged")
            returned.set()
            return RESPONSE

        task = asyncio.create_task(store.run_once(key("gone"), REQUEST, operation))
        await returned.wait()
        assert not task.done(), "recorded before the cancellation came"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not others(), "the renewal task outlived the cancelled run_once"
        stored = await store.load(key("gone"))
        assert stored is not None and str(stored.record.status) == "succeeded"
        assert stored.response == RESPONSE
        again = await store.run_once(key("gone"), REQUEST, operation)
        assert (again.decision, again.response) == ("replay", RESPONSE)
        assert effects == ["charged"]
        await database.close()

    asyncio.run(main())


class AsyncManualClock:
    """A store clock the test moves; a pause moves it forward (and waits as long)."""

    def __init__(self) -> None:
        self.now = 1_000

    def now_millis(self) -> int:
        return self.now

    async def pause_millis(self, millis: int) -> None:
        await asyncio.sleep(millis / 1000)
        self.now += millis


def test_a_relay_cancelled_after_a_send_marks_it_sent(server: Server) -> None:
    """The send returns as the server ends the relay's session, and the relay's
    task is cancelled at once: the relay's mark (retried on a fresh connection
    after a pause) marks the message sent all the same, the cancellation
    propagates after it, and a later relay (its claim long over) sends nothing.
    SQLite has no session to end: its mark runs to its end in the driver's thread.
    """
    make = fresh(server)

    async def main() -> None:
        database = make()
        await database.migrate()
        clock = AsyncManualClock()
        outbox = AsyncOutbox(database, RelayPolicy(10, 60_000), clock=clock)
        async with database.transaction(write=True) as raw:
            await outbox.enqueue(raw, OutboxMessage(1, "order.created", "o-1", b"{}"))
        sent: list[int] = []
        killing: list[Exception] = []

        async def send(message: ClaimedMessage) -> None:
            sent.append(message.message_id)
            if len(sent) == 1:
                try:
                    await asyncio.to_thread(server.kill_connections)
                except Exception as error:  # the test's own step: reported below, not a send's
                    killing.append(error)
                relay.cancel()  # delivered at the relay's next wait: its mark

        relay = asyncio.create_task(outbox.relay(send))
        await asyncio.wait([relay])
        assert not killing, killing
        assert sent == [1] and relay.cancelled(), (sent, relay)
        stored = await outbox.load("order.created", "o-1")
        assert stored is not None and stored.status == "sent", stored
        clock.now += 120_000  # any claim left would have ended
        report = await outbox.relay(send)
        assert (sent, report.sent) == ([1], 0)
        await database.close()

    asyncio.run(main())


def test_a_store_is_bound_to_one_loop_and_one_process(server: Server) -> None:
    make = fresh(server)
    database = make()
    store = AsyncIdempotencyStore(database, RecordPolicy())

    async def first() -> None:
        await database.migrate()
        assert await store.load(key("bound")) is None
        await database.close()

    asyncio.run(first())
    with pytest.raises(LoopBindingError, match="another event loop"):
        asyncio.run(store.load(key("bound")))

    async def in_child() -> str:
        try:
            await store.load(key("bound"))
        except LoopBindingError as error:
            return str(error)
        return "served"

    assert "forked child" in in_forked_child(lambda: asyncio.run(in_child()))


def test_the_apps_psycopg_pool_serves_both_ways(server: Server) -> None:
    if server.dialect != "postgres":
        pytest.skip("a psycopg pool is PostgreSQL's")
    from psycopg_pool import AsyncConnectionPool

    make = fresh(server)
    url = getattr(server, "_url")  # noqa: B009

    async def main() -> None:
        await make().migrate()
        async with AsyncConnectionPool(url, min_size=1, max_size=2, open=False) as pool:
            store = AsyncIdempotencyStore(AsyncPostgresDatabase(pool), RecordPolicy())

            async def done() -> StoredResponse:
                return RESPONSE

            assert await store.run_once(key("pooled"), REQUEST, done) == RunResult(
                "execute", RESPONSE
            )
            replay = await store.run_once(key("pooled"), REQUEST, done)
            assert replay.decision == "replay" and replay.response == RESPONSE

            async with pool.connection() as conn, conn.transaction():
                await conn.execute("CREATE TABLE pooled_effect (id text)")

                async def write(raw: object) -> StoredResponse:
                    assert raw is conn
                    await conn.execute("INSERT INTO pooled_effect VALUES ('one')")
                    return RESPONSE

                got = await store.in_transaction(conn, key("same-tx"), REQUEST, write)
                assert got == RunResult("execute", RESPONSE)
            stored = await store.load(key("same-tx"))
            assert stored is not None and stored.response == RESPONSE

    asyncio.run(main())


def test_wsgi_refuses_an_async_store(tmp_path: pathlib.Path) -> None:
    database = AsyncSqliteDatabase(str(tmp_path / "wsgi.sqlite3"))
    http = HttpIdempotency(
        store=AsyncIdempotencyStore(database, RecordPolicy()), scope=lambda request: "user:1"
    )
    assert http.is_async
    with pytest.raises(TypeError, match="synchronous store"):
        WsgiIdempotency(lambda environ, start_response: [], http=http)


def test_a_blocking_clock_is_refused(tmp_path: pathlib.Path) -> None:
    database = AsyncSqliteDatabase(str(tmp_path / "clock.sqlite3"))
    with pytest.raises(TypeError, match="AsyncStoreClock"):
        AsyncIdempotencyStore(database, RecordPolicy(), clock=SystemStoreClock())  # type: ignore[arg-type]


class AbortError(Exception):
    """Ends the app's transaction with a rollback."""


def sqlalchemy_url(server: Server, driver: str) -> str:
    """The case's database as a SQLAlchemy async URL, on the store's own driver."""
    if server.dialect == "sqlite":
        path: str = getattr(server, "_path")  # noqa: B009
        return "sqlite+aiosqlite:///" + path
    url: str = getattr(server, "_url")  # noqa: B009
    if server.dialect == "postgres":
        return f"postgresql+{driver}://" + url.split("://", 1)[1]
    return "mysql+asyncmy://" + url.split("://", 1)[1]


@pytest.mark.parametrize("driver", ["psycopg", "asyncpg"])
def test_a_sqlalchemy_connection_serves_the_same_transaction(server: Server, driver: str) -> None:
    """The record commits with the app's writes on its SQLAlchemy AsyncConnection,
    and rolls back with them: no record, no business row.
    """
    if driver == "asyncpg" and server.dialect != "postgres":
        pytest.skip("asyncpg is PostgreSQL's")
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine

    server.fresh()
    make = server.async_factory(driver)

    async def main() -> None:
        database = make()
        await database.migrate()
        store = AsyncIdempotencyStore(database, RecordPolicy())
        engine = create_async_engine(sqlalchemy_url(server, driver))
        try:
            async with engine.begin() as conn:
                await conn.execute(text("CREATE TABLE sa_effect (name VARCHAR(16))"))

            async def write(given: object) -> StoredResponse:
                assert isinstance(given, AsyncConnection)  # the app's, as it passed it
                await given.execute(text("INSERT INTO sa_effect VALUES ('one')"))
                return RESPONSE

            async with engine.begin() as conn:
                got = await store.in_transaction(conn, key("sa-commit"), REQUEST, write)
                assert got == RunResult("execute", RESPONSE)
            with pytest.raises(AbortError):
                async with engine.begin() as conn:
                    await store.in_transaction(conn, key("sa-rollback"), REQUEST, write)
                    raise AbortError
            async with engine.connect() as conn:
                rows = (await conn.execute(text("SELECT COUNT(*) FROM sa_effect"))).scalar()
            assert rows == 1  # the rolled-back transaction's row is gone
            stored = await store.load(key("sa-commit"))
            assert stored is not None and stored.response == RESPONSE
            assert await store.load(key("sa-rollback")) is None  # and its record
        finally:
            await engine.dispose()
            await database.close()

    asyncio.run(main())
