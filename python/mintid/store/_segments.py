"""Segment IDs (Leaf-style) over ``id_segment``: ranges fetched from the
database, handed out from memory, the next one fetched in the background.
Every rule is the core's ``SegmentDriver``: the runs of IDs, when a fetch is
due, the fetch's queries, retries and errors; this module runs its steps.
"""  # noqa: D205

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any, Final

from mintid._buffer import register_for_fork
from mintid._native import call, ffi
from mintid._segment import SegmentPolicy
from mintid.errors import MintidError
from mintid.store._clock import StoreClock, SystemStoreClock
from mintid.store._database import Database, QueryRunner, Steps, drive
from mintid.store._metrics import StoreMetrics, recording

__all__ = ["SegmentIds", "SegmentsBase"]

_EMPTY: Final[Iterator[int]] = iter(())


class SegmentsBase:
    """What segment IDs are, sync or async: the core's driver, the run of IDs
    in hand, and what a take calls for (the I/O-free part of
    :class:`SegmentIds` and :class:`mintid.store.aio.AsyncSegmentIds`).
    """  # noqa: D205

    def __init__(
        self,
        database: Any,
        tag: str,
        policy: SegmentPolicy,
        clock: Any,
        background: bool,
        metrics: StoreMetrics | None,
    ) -> None:
        """IDs of ``tag`` over ``database``, reporting database errors to ``metrics``."""
        if not isinstance(policy, SegmentPolicy):
            raise TypeError(f"policy must be a SegmentPolicy, got {type(policy).__name__}")
        if not isinstance(tag, str):
            raise TypeError(f"tag must be a str, got {type(tag).__name__}")
        self.database = database
        self.tag = tag
        self.policy = policy
        #: Where the database errors are reported.
        self.metrics, self._metrics = recording(metrics)
        self._clock = clock
        self._driver: Any = call(ffi.SegmentDriver, database.manifest, tag, policy._to_ffi())
        self._background = background
        self._ids: Iterator[int] = _EMPTY
        register_for_fork(self)

    def _after_fork_in_child(self) -> None:
        """In a fork child: the parent holds the same run and segments, so the
        core's driver forgets them and the run in hand is dropped (gaps, never
        duplicates); the next ID comes from a fresh segment.
        """  # noqa: D205
        self._driver.forget_after_fork()
        self._ids = _EMPTY

    def _take(self) -> tuple[str, int | None, float]:
        """Take the next run of IDs from the driver: what the core says to do
        (``fetch`` inline, raising; ``fetch_beside``, in the background or,
        without one, inline and quietly; ``wait`` for another caller's fetch,
        at most the seconds given; or ``none``) and the run's first ID, when
        there is one (the rest is in hand).
        """  # noqa: D205
        taken = self._driver.take(self._clock.now_millis())
        action = taken.action
        wait = 0.0
        if isinstance(action, ffi.SegmentTakeAction.FETCH_NOW):
            name = "fetch"
        elif isinstance(action, ffi.SegmentTakeAction.FETCH_BESIDE):
            name = "fetch_beside"
        elif isinstance(action, ffi.SegmentTakeAction.WAIT):
            name, wait = "wait", action.millis / 1000
        else:
            name = "none"
        if not taken.count:
            return name, None, wait
        self._ids = iter(range(taken.first + 1, taken.first + taken.count))
        return name, int(taken.first), wait

    def _settled(self) -> bool:
        """Whether a caller waiting for another's fetch may take again."""
        driver = self._driver
        return bool(driver.remaining() > 0 or not driver.fetch_in_flight())

    def _fetching(self) -> Steps:
        """The due fetch's first step, how it takes an answer, and how it resumes."""
        driver, clock = self._driver, self._clock
        return driver.fetch, lambda answer: driver.push(answer, clock.now_millis()), driver.resume


class SegmentIds(SegmentsBase):
    """IDs of one ``tag``, unique across every process sharing it and increasing
    within this one. Once the policy's share of a segment is used, the next is
    fetched in a background thread (double buffer), so :meth:`next_id` waits on
    the database only when the segments run out. A restart loses at most the
    unused rest of what was fetched. Thread-safe.
    """  # noqa: D205

    database: Database

    def __init__(
        self,
        database: Database,
        tag: str,
        policy: SegmentPolicy,
        *,
        clock: StoreClock | None = None,
        background: bool = True,
        metrics: StoreMetrics | None = None,
    ) -> None:
        """IDs of ``tag`` (1 to 64 ASCII characters, created on first use);
        ``background=False`` fetches inline, in the :meth:`next_id` call that
        makes the fetch due. The database errors go to ``metrics`` (by default
        OpenTelemetry's, as :class:`~mintid.store.IdempotencyStore`'s).
        """  # noqa: D205
        used = clock if clock is not None else SystemStoreClock()
        super().__init__(database, tag, policy, used, background, metrics)
        self._refill = threading.Lock()
        self._changed = threading.Condition()

    def _after_fork_in_child(self) -> None:
        # The parent's threads are gone, and may have held these.
        self._refill = threading.Lock()
        self._changed = threading.Condition()
        super()._after_fork_in_child()

    def next_id(self) -> int:
        """The next ID (raises :class:`~mintid.store.StoreUnavailableError` when the
        segments ran out and the database cannot be reached).
        """  # noqa: D205
        try:
            return next(self._ids)
        except StopIteration:
            return self._next_slow()

    def _next_slow(self) -> int:
        """Take the next run of IDs from the driver, running a fetch when it is due."""
        with self._refill:
            while True:
                # Another thread may have taken a run meanwhile.
                for first in self._ids:
                    return first
                action, first_id, wait = self._take()
                if action == "fetch":
                    self._fetch()
                elif action == "fetch_beside" and self._background:
                    threading.Thread(target=self._fetch_quietly, daemon=True).start()
                elif action == "fetch_beside":
                    self._fetch_quietly()
                elif action == "wait":
                    with self._changed:
                        # Another caller's fetch is in flight: wait for it to end.
                        self._changed.wait_for(self._settled, wait)
                if first_id is not None:
                    return first_id

    def _fetch_quietly(self) -> None:
        # The driver has recorded the failure: the next take asks for the fetch again.
        with contextlib.suppress(Exception):
            self._fetch()

    def _fetch(self) -> None:
        """Run the due fetch's steps; its failure is raised as the core's typed error."""
        try:
            drive(QueryRunner(self.database, None, self._metrics), self._clock, *self._fetching())
        except MintidError:
            raise  # the driver ended the fetch itself
        except BaseException:
            self._driver.abandon()
            raise
        finally:
            with self._changed:
                self._changed.notify_all()
