"""The idempotency store for asyncio: :class:`AsyncIdempotencyStore` and
:class:`AsyncRecordLease`, on the record driver stepped by the one async loop
of the wire (:func:`mintid._wire.drive_async`).
"""  # noqa: D205

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from typing import Any, Final

from mintid._key import IdempotencyKey
from mintid._native import ffi
from mintid._record import RecordPolicy
from mintid._wire import RecordWire, drive_async, once_async
from mintid._wire_codec import Held, count
from mintid.store._errors import RecordLostError
from mintid.store._idempotency import (
    _HELD,
    LeaseBase,
    OperationError,
    RunResult,
    StoredRecord,
    StoredResponse,
    StoreRequest,
    _finish,
    cleanup_spec,
    completing,
    load_spec,
    loaded,
    native_key,
    not_run,
    record_spec,
    request_driver,
    unrecorded,
)
from mintid.store._metrics import StoreMetrics, claiming, operating, recording
from mintid.store.aio._database import (
    AsyncDatabase,
    AsyncStoreClock,
    async_clock,
    async_database,
    driver_connection,
)
from mintid.store.aio._loop import AsyncQueryRunner, to_the_end
from mintid.store.fast_path import AsyncRedisFastPath, bound

#: The lease of the ``run_once`` operation running in this task.
_CURRENT: Final[contextvars.ContextVar[AsyncRecordLease | None]] = contextvars.ContextVar(
    "mintid_async_record_lease", default=None
)


class AsyncRecordLease(LeaseBase):
    """:class:`~mintid.store.RecordLease` for asyncio: a claim on a key, with
    its lease, from :meth:`AsyncIdempotencyStore.claim_lease` (or, as
    :meth:`current`, the lease a ``run_once`` operation runs under).
    """  # noqa: D205

    def __init__(
        self,
        store: AsyncIdempotencyStore,
        driver: RecordWire,
        key: ffi.IdempotencyKey,
        held: Held,
        *,
        finishable: bool = True,
    ) -> None:
        """Made by the store, never by hand."""
        super().__init__(driver, key, held, store._metrics, finishable=finishable)
        self._store = store
        self._lock = asyncio.Lock()

    @staticmethod
    def current() -> AsyncRecordLease | None:
        """The lease of the ``run_once`` operation running in this task, if any."""
        return _CURRENT.get()

    async def renew(self) -> int:
        """Move the lease deadline on; the new deadline (see :meth:`RecordLease.renew`)."""
        store = self._store
        store.database.bound()
        async with self._lock:
            clock = store._clock
            renewal = self._renewal_wire(store.database, store.policy)
            try:
                step = await drive_async(
                    store._runner(), clock, renewal, renewal.start(clock.now_millis())
                )
            except RecordLostError:
                self._lost_now()
                raise
            return self._renewed(step)

    async def complete(self, response: StoredResponse) -> None:
        """Store the response (see :meth:`RecordLease.complete`)."""
        await self._finish(response)

    async def fail(
        self, error: str, *, retryable: bool = False, response: StoredResponse | None = None
    ) -> None:
        """Store a failure (see :meth:`RecordLease.fail`)."""
        await self._finish(OperationError(error, retryable=retryable, response=response))

    async def _finish(self, result: object) -> None:
        store = self._store
        store.database.bound()
        step = self._finish_step(result, store._clock.now_millis())
        await to_the_end(self._recording(result, step))

    async def _recording(self, result: object, step: bytes) -> None:
        store = self._store
        with completing(store._metrics, ffi.Way.LEASE, result) as ended:
            ended(
                self._driver.end(
                    await drive_async(store._runner(), store._clock, self._driver, step)
                )
            )

    async def _renew_every(self, every_millis: int) -> None:
        """The background renewal: every ``every_millis`` until cancelled or lost."""
        while True:
            # The schedule is real time, as the sync store's heartbeat (never a test's clock).
            await asyncio.sleep(every_millis / 1000)
            try:
                await self.renew()
            except RecordLostError:
                return  # the lease says so (lost); nothing more to renew
            except Exception:  # unavailable (or another failure): the next beat tries again
                continue


class AsyncIdempotencyStore:
    """:class:`~mintid.store.IdempotencyStore` for asyncio: idempotency records
    in one :class:`AsyncDatabase` under one :class:`~mintid.RecordPolicy`.

    Bound to one event loop and one process (:class:`LoopBindingError`).

    Cancellation: once the operation has an outcome, recording it finishes
    even if the caller goes away (docs/spec.md, "Completion keeps trying"). A
    ``run_once`` whose task is cancelled while the operation runs releases
    the key (as for any exception the operation raises: a retryable failure,
    error ``CancelledError``, that the next request runs anew); one cancelled
    after the operation returned stores its response; a completion or
    release cancelled midway (:meth:`AsyncRecordLease.complete` and ``fail``
    too) runs to its end. Then the :class:`asyncio.CancelledError`
    propagates. One cancelled during the claim leaves a claim written (if
    it was) pending until its lease passes, when another request takes the
    key over; nothing ran.
    """  # noqa: D205

    def __init__(
        self,
        database: AsyncDatabase,
        policy: RecordPolicy,
        *,
        clock: AsyncStoreClock | None = None,
        fast_path: AsyncRedisFastPath | None = None,
        metrics: StoreMetrics | None = None,
    ) -> None:
        """A store over ``database`` (see :class:`AsyncPostgresDatabase`, …), with
        the Redis fast path in front of ``run_once`` and ``claim_lease`` when
        ``fast_path`` is given (:mod:`mintid.store.fast_path`); ``metrics`` as
        the sync store's (by default OpenTelemetry's global providers, when
        ``opentelemetry-api`` is importable).
        """  # noqa: D205
        if not isinstance(policy, RecordPolicy):
            raise TypeError(f"policy must be a RecordPolicy, got {type(policy).__name__}")
        self.database = async_database(database)
        self.policy = policy
        #: Where decisions, latencies, errors and spans are reported.
        self.metrics, self._metrics = recording(metrics)
        self._clock = async_clock(clock)
        self._spec = record_spec(database, policy)
        self._fast = bound(fast_path, AsyncRedisFastPath, self._metrics)

    def _runner(self, raw: Any = None) -> AsyncQueryRunner:
        """A runner on the pool (or on the caller's ``raw``), reporting to the metrics."""
        return AsyncQueryRunner(self.database, raw, self._metrics)

    async def _start(
        self, runner: AsyncQueryRunner, way: ffi.Way, key: IdempotencyKey, request: StoreRequest
    ) -> tuple[RecordWire, Any]:
        self.database.bound()
        driver, step = request_driver(self._spec, self._fast, self._clock, way, key, request)
        with claiming(self._metrics, way) as ended:
            return driver, ended(driver.end(await drive_async(runner, self._clock, driver, step)))

    async def _end(
        self,
        runner: AsyncQueryRunner,
        way: ffi.Way,
        driver: RecordWire,
        result: object,
        beat: asyncio.Task[None] | None = None,
    ) -> Any:
        """Store what the operation came to, once the renewal ``beat`` has stopped."""
        await _stopped(beat)
        clock = self._clock
        step = _finish(driver, result, clock.now_millis())
        with completing(self._metrics, way, result) as ended:
            return ended(driver.end(await drive_async(runner, clock, driver, step)))

    async def run_once(
        self,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[], Awaitable[StoredResponse]],
    ) -> RunResult:
        """:meth:`IdempotencyStore.run_once <mintid.store.IdempotencyStore.run_once>`
        with an async ``operation``; its lease is renewed by a task of this
        loop while it runs (:meth:`AsyncRecordLease.current`).
        """  # noqa: D205
        runner = self._runner()
        way = ffi.Way.RUN_ONCE
        driver, held = await self._start(runner, way, key, request)
        if type(held) is not _HELD:
            return not_run(held)
        lease = AsyncRecordLease(self, driver, native_key(key), held, finishable=False)
        every = held.renew_every_millis
        current = _CURRENT.set(lease)
        beat = (
            None
            if every is None
            else asyncio.get_running_loop().create_task(lease._renew_every(every))
        )
        try:
            with operating(self._metrics, way):
                response = await operation()
        except BaseException as error:
            _CURRENT.reset(current)
            unrecorded(await to_the_end(self._end(runner, way, driver, error, beat)), error)
            raise
        _CURRENT.reset(current)
        await to_the_end(self._end(runner, way, driver, response, beat))
        return RunResult("execute", response)

    async def in_transaction(
        self,
        connection: Any,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[Any], Awaitable[StoredResponse]],
    ) -> RunResult:
        """:meth:`run_once` inside the caller's transaction on ``connection`` (the
        driver's async connection, e.g. from :meth:`AsyncDatabase.transaction`,
        or a SQLAlchemy ``AsyncConnection`` on the same driver: see
        :func:`driver_connection`), as :meth:`IdempotencyStore.in_transaction
        <mintid.store.IdempotencyStore.in_transaction>`; ``operation`` gets
        ``connection`` as given.
        """  # noqa: D205
        runner = self._runner(await driver_connection(connection))
        way = ffi.Way.SAME_TRANSACTION
        driver, held = await self._start(runner, way, key, request)
        if type(held) is not _HELD:
            return not_run(held)
        try:
            with operating(self._metrics, way):
                response = await operation(connection)
        except BaseException as error:
            unrecorded(await to_the_end(self._end(runner, way, driver, error)), error)
            raise
        await to_the_end(self._end(runner, way, driver, response))
        return RunResult("execute", response)

    async def claim_lease(
        self, key: IdempotencyKey, request: StoreRequest
    ) -> AsyncRecordLease | RunResult:
        """Claim ``key`` with a lease: an :class:`AsyncRecordLease` to complete or
        fail, or the :class:`~mintid.store.RunResult` of a request that does not run.
        """  # noqa: D205
        driver, held = await self._start(self._runner(), ffi.Way.LEASE, key, request)
        if type(held) is not _HELD:
            return not_run(held)
        return AsyncRecordLease(self, driver, native_key(key), held)

    async def load(self, key: IdempotencyKey) -> StoredRecord | None:
        """The stored record of ``key``, or ``None``."""
        self.database.bound()
        packed = load_spec(self.database.manifest, key)
        return loaded(await once_async(self._runner(), self._clock, packed))

    async def cleanup(self, batch_size: int = 1000) -> int:
        """Delete expired records, ``batch_size`` per statement; the total
        (see :meth:`IdempotencyStore.cleanup <mintid.store.IdempotencyStore.cleanup>`).
        """  # noqa: D205
        self.database.bound()
        packed = cleanup_spec(self.database.manifest, batch_size)
        return count(await once_async(self._runner(), self._clock, packed))


async def _stopped(beat: asyncio.Task[None] | None) -> None:
    """Stop the background renewal and wait until it has (a renewal in flight ends)."""
    if beat is None:
        return
    beat.cancel()
    await asyncio.wait([beat])
