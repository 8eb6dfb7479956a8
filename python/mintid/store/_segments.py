"""Segment IDs (Leaf-style) over ``id_segment``: ranges fetched from the database,
handed out from memory, the next fetched in the background. Every rule (the runs, what
a take calls for and how long to wait, the fetch) is the core's segment driver.
"""  # noqa: D205

from __future__ import annotations

import contextlib
import threading
from collections.abc import Generator, Iterator
from typing import Any, Final

from mintid import _wire_codec as codec
from mintid._buffer import register_for_fork
from mintid._segment import SegmentPolicy
from mintid._wire import SharedWire, driving, run, spec
from mintid.errors import MintidError
from mintid.store._clock import StoreClock, SystemStoreClock
from mintid.store._database import Database, QueryRunner
from mintid.store._metrics import StoreMetrics, recording

__all__ = ["SegmentIds", "SegmentsBase"]

_EMPTY: Final[Iterator[int]] = iter(())


class SegmentsBase:
    """What segment IDs are, sync or async: the core's driver, the run of IDs
    in hand, and the step loop of a take, written once and run by
    :class:`SegmentIds` and :class:`mintid.store.aio.AsyncSegmentIds`.
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
        head = spec(codec.SEGMENT, database.manifest)
        self._wire = SharedWire(
            codec.segment_spec(head, tag, codec.segment_policy(policy)), checked=True
        )
        self._background = background
        self._ids: Iterator[int] = _EMPTY
        register_for_fork(self)

    def _after_fork_in_child(self) -> None:
        """In a fork child: the parent holds the same run and segments, so the
        core's driver forgets them and the run in hand is dropped (gaps, never
        duplicates); the next ID comes from a fresh segment.
        """  # noqa: D205
        self._wire.lock = threading.Lock()  # a parent's thread may have held it
        self._wire.call(codec.tagged(codec.FORKED, self._clock.now_millis()))
        self._ids = _EMPTY

    def _taking(self) -> Generator[Any, Any, int]:
        """The step loop of a take: the next ID, after what the core says to do
        (fetch now, raising; fetch beside; wait for another caller's fetch, at
        most the time it gives).
        """  # noqa: D205
        while True:
            # Another caller may have taken a run meanwhile.
            for first in self._ids:
                return first
            step = self._wire.call(codec.tagged(codec.TAKE, self._clock.now_millis()))
            if step[0] != codec.TAKEN:
                raise codec.error(step)
            first, count, action, wait_millis = codec.taken(step)
            if count:
                self._ids = iter(range(first + 1, first + count))
            if action == codec.FETCH_NOW:
                yield self._fetch()
            elif action == codec.FETCH_BESIDE:
                yield self._fetch_beside()
            elif action == codec.WAIT:
                yield self._wait(wait_millis / 1000)
            if count:
                return first

    def _fetching(self) -> Generator[Any, Any, None]:
        """The step loop of the due fetch; its failure raised as the core's typed error."""
        wire, clock = self._wire, self._clock
        try:
            self.database.bound()
            runner = QueryRunner(self.database, None, self._metrics)
            step = wire.call(codec.tagged(codec.FETCH, clock.now_millis()))
            yield from driving(runner, clock, wire, step)
        except (MintidError, GeneratorExit):
            raise  # the driver ended the fetch itself; or CLOSED (mintid._wire)
        except BaseException:
            wire.call(codec.tagged(codec.ABANDON, clock.now_millis()))
            raise

    def _fetch(self) -> Any:
        """Run the due fetch (its awaitable, in asyncio)."""
        raise NotImplementedError

    def _fetch_beside(self) -> Any:
        """Run the due fetch beside the caller, or inline and quietly without a background."""
        raise NotImplementedError

    def _wait(self, seconds: float) -> Any:
        """Wait for another caller's fetch to end, at most ``seconds``."""
        raise NotImplementedError


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
            with self._refill:
                return run(self._taking())

    def _fetch(self) -> None:
        try:
            run(self._fetching())
        finally:
            with self._changed:
                self._changed.notify_all()

    def _fetch_quietly(self) -> None:
        # The driver has recorded the failure: the next take asks for the fetch again.
        with contextlib.suppress(Exception):
            self._fetch()

    def _fetch_beside(self) -> None:
        if self._background:
            threading.Thread(target=self._fetch_quietly, daemon=True).start()
        else:
            self._fetch_quietly()

    def _wait(self, seconds: float) -> None:
        with self._changed:
            self._changed.wait(seconds)
