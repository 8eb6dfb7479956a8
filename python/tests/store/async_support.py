"""Sync views of the async store for the conformance runner: each call runs on
one event loop in a thread of its own, and an operation the runner gives (a
plain function) runs in a worker thread, so the runner's scenario reading is
the sync store's, unchanged.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import Any, TypeVar

from mintid import IdempotencyKey, LeasePolicy, RelayPolicy, SegmentPolicy
from mintid.store import (
    ClaimedMessage,
    RelayReport,
    RunResult,
    StoreClock,
    StoredResponse,
    StoreRequest,
    SystemStoreClock,
)
from mintid.store.aio import (
    AsyncDatabase,
    AsyncIdempotencyStore,
    AsyncLeasedSnowflake,
    AsyncOutbox,
    AsyncRecordLease,
    AsyncSegmentIds,
    AsyncWorkerLeases,
)
from store.store_support import Factory, Kit, Server, databases

T = TypeVar("T")


class LoopThread:
    """An event loop running in a daemon thread; :meth:`call` waits for a coroutine there."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def call(self, awaitable: Awaitable[T]) -> T:
        async def run() -> T:
            return await awaitable

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class AsyncClock:
    """The runner's clock for the async store: a manual clock advances on a
    pause (as in the sync runner), the system clock sleeps on the loop.
    """

    def __init__(self, clock: StoreClock) -> None:
        self.clock = clock

    def now_millis(self) -> int:
        return self.clock.now_millis()

    async def pause_millis(self, millis: int) -> None:
        if isinstance(self.clock, SystemStoreClock):
            await asyncio.sleep(millis / 1000)
        else:
            self.clock.pause_millis(millis)


class SyncDatabase:
    """The runner's view of an :class:`AsyncDatabase`."""

    def __init__(self, loop: LoopThread, database: AsyncDatabase) -> None:
        self.loop = loop
        self.inner = database
        self.dialect = database.dialect

    @contextmanager
    def _entered(self, manager: AbstractAsyncContextManager[Any]) -> Iterator[Any]:
        raw = self.loop.call(manager.__aenter__())
        try:
            yield raw
        except BaseException as error:
            self.loop.call(manager.__aexit__(type(error), error, error.__traceback__))
            raise
        self.loop.call(manager.__aexit__(None, None, None))

    @contextmanager
    def connection(self) -> Iterator[Any]:
        with self._entered(self.inner.connection()) as raw:
            yield raw

    @contextmanager
    def transaction(self, *, write: bool = False) -> Iterator[Any]:
        with self._entered(self.inner.transaction(write=write)) as raw:
            yield raw

    def execute(self, raw: Any, sql: str, params: Any = None) -> None:
        self.loop.call(self.inner.execute(raw, sql, params))

    def migrate(self) -> None:
        self.loop.call(self.inner.migrate())

    def close(self) -> None:
        self.loop.call(self.inner.close())


class SyncLease:
    """The runner's view of an :class:`AsyncRecordLease`."""

    def __init__(self, loop: LoopThread, lease: AsyncRecordLease) -> None:
        self.loop = loop
        self.inner = lease

    @property
    def token(self) -> int:
        return self.inner.token

    @property
    def lease_deadline_millis(self) -> int:
        return self.inner.lease_deadline_millis

    def renew(self) -> int:
        return self.loop.call(self.inner.renew())

    def complete(self, response: StoredResponse) -> None:
        self.loop.call(self.inner.complete(response))

    def fail(self, error: str, *, retryable: bool = False) -> None:
        self.loop.call(self.inner.fail(error, retryable=retryable))


class SyncStore:
    """The runner's view of an :class:`AsyncIdempotencyStore`."""

    def __init__(self, loop: LoopThread, store: AsyncIdempotencyStore) -> None:
        self.loop = loop
        self.inner = store

    def run_once(
        self, key: IdempotencyKey, request: StoreRequest, operation: Callable[[], StoredResponse]
    ) -> RunResult:
        async def run() -> StoredResponse:
            return await asyncio.to_thread(operation)

        return self.loop.call(self.inner.run_once(key, request, run))

    def in_transaction(
        self,
        connection: Any,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[Any], StoredResponse],
    ) -> RunResult:
        async def run(raw: Any) -> StoredResponse:
            return await asyncio.to_thread(operation, raw)

        return self.loop.call(self.inner.in_transaction(connection, key, request, run))

    def claim_lease(self, key: IdempotencyKey, request: StoreRequest) -> SyncLease | RunResult:
        made = self.loop.call(self.inner.claim_lease(key, request))
        return made if isinstance(made, RunResult) else SyncLease(self.loop, made)

    def cleanup(self, batch_size: int = 1000) -> int:
        return self.loop.call(self.inner.cleanup(batch_size))


def _inner(value: Any) -> Any:
    return value.inner if isinstance(value, SyncDatabase | Synced) else value


def _clock(clock: StoreClock | None) -> AsyncClock | None:
    return None if clock is None else AsyncClock(clock)


class Synced:
    """A sync view of an async store object: each coroutine method runs on the
    loop (views passed in are unwrapped); plain methods, properties and
    attribute writes go to the object itself.
    """

    def __init__(self, loop: LoopThread, inner: Any) -> None:
        object.__setattr__(self, "loop", loop)
        object.__setattr__(self, "inner", inner)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.inner, name)
        if not inspect.iscoroutinefunction(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            return self.loop.call(value(*map(_inner, args), **kwargs))

        return call

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.inner, name, _inner(value))


class SyncOutbox(Synced):
    """The runner's view of an :class:`AsyncOutbox`: its plain ``send`` runs in
    a worker thread (it may drive the runner, which calls into the loop).
    """

    def relay(self, send: Callable[[ClaimedMessage], None]) -> RelayReport:
        async def sending(message: ClaimedMessage) -> None:
            await asyncio.to_thread(send, message)

        report: RelayReport = self.loop.call(self.inner.relay(sending))
        return report


class AsyncKit(Kit):
    """The async stores behind sync views, every one on one event loop (the
    runner's concurrent steps call in from threads: their tasks interleave there).
    """

    def __init__(self, driver: str = "psycopg") -> None:
        self.loop = LoopThread()
        self.driver = driver

    @contextmanager
    def databases(self, server: Server) -> Iterator[Factory]:
        server.fresh()
        factory = server.async_factory(self.driver)

        def view(found_rows: bool = False) -> Any:
            return SyncDatabase(self.loop, factory(found_rows=found_rows))

        try:
            with databases(view) as make:
                yield make
        finally:
            self.loop.stop()

    def unavailable(self, server: Server) -> Any:
        return SyncDatabase(self.loop, server.unavailable_async(self.driver))

    def leases(self, database: Any, policy: LeasePolicy, clock: StoreClock | None = None) -> Any:
        return Synced(self.loop, AsyncWorkerLeases(_inner(database), policy, clock=_clock(clock)))

    def leased(self, leases: Any, owner: str, timeout_millis: int | None) -> Any:
        made = AsyncLeasedSnowflake.acquire(_inner(leases), owner, timeout_millis)
        return Synced(self.loop, self.loop.call(made))

    def segments(self, database: Any, tag: str, policy: SegmentPolicy, **options: Any) -> Any:
        clock = _clock(options.pop("clock", None))
        made = AsyncSegmentIds(_inner(database), tag, policy, clock=clock, **options)
        return Synced(self.loop, made)

    def segment_row(self, database: Any, tag: str) -> tuple[Any, ...] | None:
        inner: AsyncDatabase = _inner(database)

        async def load() -> Any:
            async with inner.connection() as raw:
                return await inner.query(raw, "segment_load", [tag])

        rows = self.loop.call(load())
        return tuple(rows[0]) if rows else None

    def outbox(self, database: Any, policy: RelayPolicy, **options: Any) -> Any:
        clock = _clock(options.pop("clock", None))
        return SyncOutbox(self.loop, AsyncOutbox(_inner(database), policy, clock=clock, **options))
