"""Worker-id leases and segment IDs for asyncio: :class:`AsyncWorkerLeases`,
:class:`AsyncLeasedSnowflake` and :class:`AsyncSegmentIds`, the async twins
of :mod:`mintid.store._leases` and :mod:`mintid.store._segments`.

The same core drivers, stepped by the one async loop for drivers off the
wire (:func:`mintid.store.aio._loop.drive_steps`); what is not I/O (argument
checks, each driver's steps, result mapping, what a take calls for) is the
sync classes' own code. The lease's heartbeat and the background segment
fetch are tasks of the store's event loop.
"""  # noqa: D205

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from mintid._lease import LeaseGuard, LeasePolicy
from mintid._segment import SegmentPolicy
from mintid.errors import MintidError
from mintid.store._database import shutdown_wait_seconds
from mintid.store._leases import LeasedBase, LeasesBase, WorkerLeaseRow, lease_row
from mintid.store._metrics import StoreMetrics
from mintid.store._segments import SegmentsBase
from mintid.store.aio._database import (
    AsyncDatabase,
    AsyncStoreClock,
    async_clock,
    async_database,
)
from mintid.store.aio._loop import AsyncQueryRunner, drive_steps

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

    async def _drive(self, steps: Any) -> Any:
        self.database.bound()
        runner = AsyncQueryRunner(self.database, None, self._metrics)
        return await drive_steps(runner, self.clock, *steps)

    async def acquire(self, owner: str, timeout_millis: int | None = None) -> LeaseGuard:
        """:meth:`WorkerLeases.acquire <mintid.store.WorkerLeases.acquire>`, awaited."""
        return LeaseGuard._of((await self._drive(self._acquiring(owner, timeout_millis))).guard)

    async def renew(self, guard: LeaseGuard, high_water_millis: int) -> None:
        """:meth:`WorkerLeases.renew <mintid.store.WorkerLeases.renew>`, awaited."""
        await self._drive(self._renewing(guard, high_water_millis))

    async def release(self, guard: LeaseGuard, high_water_millis: int | Callable[[], int]) -> bool:
        """:meth:`WorkerLeases.release <mintid.store.WorkerLeases.release>`, awaited."""
        return bool((await self._drive(self._releasing(guard, high_water_millis))).released)

    async def load(self, worker_id: int) -> WorkerLeaseRow | None:
        """The row of ``worker_id``, or ``None``."""
        async with self.database.connection() as raw:
            rows = await self.database.query(raw, "lease_load", [worker_id])
        assert isinstance(rows, list)
        return lease_row(rows[0]) if rows else None


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
        return await self._next_slow()

    async def _next_slow(self) -> int:
        async with self._refill:
            while True:
                # Another task may have taken a run meanwhile.
                for first in self._ids:
                    return first
                action, first_id, wait = self._take()
                if action == "fetch":
                    await self._fetch()
                elif action == "fetch_beside" and self._background:
                    task = asyncio.get_running_loop().create_task(self._fetch_quietly())
                    self._fetches.add(task)
                    task.add_done_callback(self._fetches.discard)
                elif action == "fetch_beside":
                    await self._fetch_quietly()
                elif action == "wait":
                    async with self._changed:
                        # Another task's fetch is in flight: wait for it to end.
                        with contextlib.suppress(asyncio.TimeoutError):
                            await asyncio.wait_for(self._changed.wait_for(self._settled), wait)
                if first_id is not None:
                    return first_id

    async def _fetch_quietly(self) -> None:
        # The driver has recorded the failure: the next take asks for the fetch again.
        with contextlib.suppress(Exception):
            await self._fetch()

    async def _fetch(self) -> None:
        """Run the due fetch's steps; its failure is raised as the core's typed error."""
        try:
            self.database.bound()
            runner = AsyncQueryRunner(self.database, None, self._metrics)
            await drive_steps(runner, self._clock, *self._fetching())
        except MintidError:
            raise  # the driver ended the fetch itself
        except BaseException:
            self._driver.abandon()
            raise
        finally:
            async with self._changed:
                self._changed.notify_all()
