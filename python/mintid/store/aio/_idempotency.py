"""The idempotency store for asyncio: :class:`AsyncIdempotencyStore` and
:class:`AsyncRecordLease`, the sync store's step loops
(:class:`mintid.store._idempotency.StoreBase`) with each call awaited.
"""  # noqa: D205

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final

from mintid._key import IdempotencyKey
from mintid._native import ffi
from mintid._record import RecordPolicy
from mintid._wire import RecordWire, drive_async, run_async
from mintid._wire_codec import RESUME, YIELD, Held, beat_deadline, pause_millis, tagged
from mintid.store._idempotency import (
    LeaseBase,
    OperationError,
    RunResult,
    StoreBase,
    StoredRecord,
    StoredResponse,
    StoreRequest,
)
from mintid.store._metrics import StoreMetrics
from mintid.store.aio._database import (
    AsyncDatabase,
    AsyncStoreClock,
    async_clock,
    async_database,
    driver_connection,
)
from mintid.store.aio._loop import to_the_end
from mintid.store.fast_path import AsyncRedisFastPath

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
        self, store: Any, driver: RecordWire, key: IdempotencyKey, held: Held, finishable: bool
    ) -> None:
        """Made by the store, never by hand."""
        super().__init__(store, driver, key, held, finishable)
        self._lock = asyncio.Lock()

    @staticmethod
    def current() -> AsyncRecordLease | None:
        """The lease of the ``run_once`` operation running in this task, if any."""
        return _CURRENT.get()

    async def renew(self) -> int:
        """Move the lease deadline on; the new deadline (see :meth:`RecordLease.renew`)."""
        async with self._lock:
            return await run_async(self._renewing())

    async def complete(self, response: StoredResponse) -> None:
        """Store the response (see :meth:`RecordLease.complete`)."""
        await to_the_end(run_async(self._finishing(response)))

    async def fail(
        self, error: str, *, retryable: bool = False, response: StoredResponse | None = None
    ) -> None:
        """Store a failure (see :meth:`RecordLease.fail`)."""
        failure = OperationError(error, retryable=retryable, response=response)
        await to_the_end(run_async(self._finishing(failure)))

    async def _beat(self) -> None:
        """The core's heartbeat of this claim, a task of the loop until it ends
        or is cancelled (the operation returned): each pause waited out, each
        renewal run (``docs/spec.md``, "The heartbeat").
        """  # noqa: D205
        store = self._store
        clock = store._clock
        wire, step = self._heartbeat()
        try:
            while step[0] == YIELD:  # a pause, with the deadline as last renewed
                self._deadline = beat_deadline(step)
                await asyncio.sleep(pause_millis(step) / 1000)  # real time, as the sync thread
                step = wire.call(tagged(RESUME, clock.now_millis()))
                step = await drive_async(store._runner(), clock, wire, step, pauses=False)
        except Exception as error:
            self._beat_ended(error)
        else:
            self._beat_ended(step)


class AsyncIdempotencyStore(StoreBase):
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

    _lease_class = AsyncRecordLease
    _current = _CURRENT
    _fast_class = AsyncRedisFastPath

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
        super().__init__(async_database(database), policy, async_clock(clock), fast_path, metrics)

    def _beat(self, lease: Any) -> Any:
        return asyncio.get_running_loop().create_task(lease._beat())

    def _complete(
        self, runner: Any, way: ffi.Way, driver: RecordWire, result: object, beat: Any
    ) -> Coroutine[Any, Any, Any]:
        async def completing() -> Any:
            if beat is not None:  # stopped, and waited for (a renewal in flight ends)
                beat.cancel()
                await asyncio.wait([beat])
            return await run_async(self._ending(runner, way, driver, result))

        return to_the_end(completing())

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
        running = self._running(self._runner(), ffi.Way.RUN_ONCE, key, request, operation)
        return await run_async(running)

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
        runner, way = self._runner(await driver_connection(connection)), ffi.Way.SAME_TRANSACTION
        running = self._running(runner, way, key, request, lambda: operation(connection))
        return await run_async(running)

    async def claim_lease(
        self, key: IdempotencyKey, request: StoreRequest
    ) -> AsyncRecordLease | RunResult:
        """Claim ``key`` with a lease: an :class:`AsyncRecordLease` to complete or
        fail, or the :class:`~mintid.store.RunResult` of a request that does not run.
        """  # noqa: D205
        return await run_async(self._claiming_lease(key, request))

    async def load(self, key: IdempotencyKey) -> StoredRecord | None:
        """The stored record of ``key``, or ``None``."""
        return await run_async(self._loading(key))

    async def cleanup(self, batch_size: int = 1000) -> int:
        """Delete expired records, ``batch_size`` per statement; the total
        (see :meth:`IdempotencyStore.cleanup <mintid.store.IdempotencyStore.cleanup>`).
        """  # noqa: D205
        return await run_async(self._cleaning(batch_size))
