"""Worker-id leases and segment IDs for asyncio: the sync classes' step loops
(``LeasesBase``, ``SegmentsBase``) awaited; the lease's heartbeat and the background
fetch are tasks of the loop.
"""  # noqa: D205

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from mintid._lease import LeaseGuard, LeasePolicy
from mintid._segment import SegmentPolicy
from mintid._wire import run_async
from mintid._wire_codec import LEASE_RELEASE, LEASE_RENEW
from mintid.store._database import shutdown_wait_seconds
from mintid.store._leases import LeasedBase, LeasesBase, WorkerLeaseRow
from mintid.store._metrics import StoreMetrics
from mintid.store._segments import SegmentsBase
from mintid.store.aio._database import (
    AsyncDatabase,
    AsyncStoreClock,
    async_clock,
    async_database,
)

__all__ = ["AsyncLeasedSnowflake", "AsyncSegmentIds", "AsyncWorkerLeases"]


class AsyncWorkerLeases(LeasesBase):
    """:class:`~mintid.store.WorkerLeases` for asyncio: worker-id leases in one
    :class:`~mintid.store.aio.AsyncDatabase` under one
    :class:`~mintid.LeasePolicy`, each call awaited (a pause while waiting
    for a worker id sleeps on the loop).
    """  # noqa: D205

    database: AsyncDatabase
    clock: AsyncStoreClock

    def __init__(
        self,
        database: AsyncDatabase,
        policy: LeasePolicy,
        *,
        clock: AsyncStoreClock | None = None,
        metrics: StoreMetrics | None = None,
    ) -> None:
        """Leases over ``database`` (``metrics`` as :class:`~mintid.store.WorkerLeases`')."""
        super().__init__(async_database(database), policy, async_clock(clock), metrics)

    async def acquire(self, owner: str, timeout_millis: int | None = None) -> LeaseGuard:
        """:meth:`WorkerLeases.acquire <mintid.store.WorkerLeases.acquire>`, awaited."""
        return await run_async(self._acquiring(owner, timeout_millis))

    async def renew(self, guard: LeaseGuard, high_water_millis: int) -> None:
        """:meth:`WorkerLeases.renew <mintid.store.WorkerLeases.renew>`, awaited."""
        await run_async(self._marking(LEASE_RENEW, guard, high_water_millis))

    async def release(self, guard: LeaseGuard, high_water_millis: int | Callable[[], int]) -> bool:
        """:meth:`WorkerLeases.release <mintid.store.WorkerLeases.release>`, awaited."""
        return (await run_async(self._marking(LEASE_RELEASE, guard, high_water_millis)))[1] != 0

    async def load(self, worker_id: int) -> WorkerLeaseRow | None:
        """The row of ``worker_id``, or ``None``."""
        async with self.database.connection() as raw:
            return self._row(await self.database.query(raw, "lease_load", [worker_id]))  # type: ignore[arg-type]


class AsyncLeasedSnowflake(LeasedBase):
    """:class:`~mintid.store.LeasedSnowflake` for asyncio: a Snowflake generator
    on a leased worker id whose lease a task of the loop renews when the guard
    says the next renewal is due. :meth:`next_id` is plain (no I/O);
    :meth:`close` (or the end of an ``async with`` block) stops the renewal
    task and releases the lease with the generator's own high-water time.
    """  # noqa: D205

    _leases: AsyncWorkerLeases

    def __init__(self, leases: AsyncWorkerLeases, guard: LeaseGuard) -> None:
        """A generator on ``guard``, a lease ``leases`` acquired and that may
        issue now, made in the loop that renews it; :meth:`acquire` makes both.
        """  # noqa: D205
        super().__init__(leases, guard)
        self._stop = asyncio.Event()
        self._heartbeat = asyncio.get_running_loop().create_task(
            self._beat(), name=f"mintid-lease-{guard.worker_id}"
        )

    @classmethod
    async def acquire(
        cls, leases: AsyncWorkerLeases, owner: str, timeout_millis: int | None = None
    ) -> AsyncLeasedSnowflake:
        """:meth:`LeasedSnowflake.acquire <mintid.store.LeasedSnowflake.acquire>`, awaited."""
        return cls(leases, await leases.acquire(owner, timeout_millis))

    async def _beat(self) -> None:
        while (wait_millis := self._wait_ms()) is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop.wait(), wait_millis / 1000)
                return
            with contextlib.suppress(Exception):  # counted by the core; next_id reports it
                await self._leases.renew(self.guard, self.high_water_millis)

    async def close(self) -> bool:
        """:meth:`LeasedSnowflake.close <mintid.store.LeasedSnowflake.close>`: the
        renewal task ends (a renewal in flight first, for at most the core's shutdown
        wait), then the lease is released.
        """  # noqa: D205
        if self._closed:
            return False
        self._closed = True
        self._stop.set()
        # A renewal in flight ends first, for at most the core's shutdown wait (then the
        # task is left: its lease ends at its deadline).
        await asyncio.wait([self._heartbeat], timeout=shutdown_wait_seconds())
        return await self._leases.release(self.guard, lambda: self.high_water_millis)

    async def __aenter__(self) -> AsyncLeasedSnowflake:
        """Use as an async context manager."""
        return self

    async def __aexit__(self, *_exc: object) -> None:
        """Close: release the lease."""
        await self.close()


class AsyncSegmentIds(SegmentsBase):
    """:class:`~mintid.store.SegmentIds` for asyncio: IDs of one ``tag`` from
    segments of the database; once the policy's share of a segment is used,
    the next is fetched by a task of the loop, so :meth:`next_id` awaits the
    database only when the segments run out. Safe for the tasks of one loop.
    """  # noqa: D205

    database: AsyncDatabase

    def __init__(
        self,
        database: AsyncDatabase,
        tag: str,
        policy: SegmentPolicy,
        *,
        clock: AsyncStoreClock | None = None,
        background: bool = True,
        metrics: StoreMetrics | None = None,
    ) -> None:
        """IDs of ``tag`` (see :class:`~mintid.store.SegmentIds`)."""
        super().__init__(
            async_database(database), tag, policy, async_clock(clock), background, metrics
        )
        self._refill = asyncio.Lock()
        self._changed = asyncio.Condition()
        self._fetches: set[asyncio.Task[None]] = set()

    def _after_fork_in_child(self) -> None:
        # The parent's loop and its tasks are gone; its database is refused here.
        self._refill = asyncio.Lock()
        self._changed = asyncio.Condition()
        self._fetches = set()
        super()._after_fork_in_child()

    async def next_id(self) -> int:
        """The next ID (raises :class:`~mintid.store.StoreUnavailableError` when the
        segments ran out and the database cannot be reached).
        """  # noqa: D205
        for first in self._ids:
            return first
        async with self._refill:
            return await run_async(self._taking())

    async def _fetch(self) -> None:
        try:
            await run_async(self._fetching())
        finally:
            async with self._changed:
                self._changed.notify_all()

    async def _fetch_quietly(self) -> None:
        # The driver has recorded the failure: the next take asks for the fetch again.
        with contextlib.suppress(Exception):
            await self._fetch()

    async def _fetch_beside(self) -> None:
        if not self._background:
            await self._fetch_quietly()
            return
        task = asyncio.get_running_loop().create_task(self._fetch_quietly())
        self._fetches.add(task)
        task.add_done_callback(self._fetches.discard)

    async def _wait(self, seconds: float) -> None:
        async with self._changed:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), seconds)
