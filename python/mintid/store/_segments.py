"""Segment IDs (Leaf-style) over ``id_segment``: ranges fetched from the
database, handed out from memory, the next one fetched in the background.
The sizing rules are the core's :class:`~mintid.SegmentAllocator`.
"""  # noqa: D205

from __future__ import annotations

import contextlib
import threading
from collections import deque

from mintid._segment import SegmentAllocator, SegmentPolicy
from mintid.store._clock import StoreClock, SystemStoreClock
from mintid.store._database import Database

__all__ = ["SegmentIds"]


class SegmentIds:
    """IDs of one ``tag``, unique across every process sharing it and increasing
    within this one. Once the policy's share of a segment is used, the next is
    fetched in a background thread (double buffer), so :meth:`next_id` waits on
    the database only when the segments run out. A restart loses at most the
    unused rest of what was fetched (and of the batch in memory). Thread-safe.
    """  # noqa: D205

    def __init__(
        self,
        database: Database,
        tag: str,
        policy: SegmentPolicy,
        *,
        clock: StoreClock | None = None,
        background: bool = True,
        batch: int = 256,
    ) -> None:
        """IDs of ``tag`` (created on first use). IDs cross from the core
        ``batch`` at a time (a call into the native library costs microseconds),
        and the threshold is checked after each batch; ``batch=1`` checks it
        after every ID. ``background=False`` fetches inline.
        """  # noqa: D205
        if not isinstance(batch, int) or batch < 1:
            raise ValueError(f"batch must be a positive int, got {batch!r}")
        self.database = database
        self.tag = tag
        self.policy = policy
        self._clock: StoreClock = clock if clock is not None else SystemStoreClock()
        self._allocator = SegmentAllocator(policy)
        self._background = background
        self._batch = batch
        self._ready: deque[int] = deque()
        self._refill = threading.Lock()
        self._changed = threading.Condition()

    def next_id(self) -> int:
        """The next ID (raises :class:`~mintid.store.StoreUnavailableError` when the
        segments ran out and the database cannot be reached).
        """  # noqa: D205
        while True:
            try:
                return self._ready.popleft()
            except IndexError:
                pass
            with self._refill:
                if not self._ready:
                    first = self._take()
                    return first

    def _take(self) -> int:
        """Take a batch from the allocator (fetching when it ran out); the first ID."""
        allocator = self._allocator
        while True:
            values = allocator.fill(self._batch)
            if values:
                break
            step = allocator.fetch_due(self._clock.now_ms())
            if step is not None:
                self._fetch(step)
            else:
                with self._changed:
                    # A fetch is in flight: wait for it to install its segment.
                    self._changed.wait_for(
                        lambda: allocator.remaining > 0 or not allocator.fetch_in_flight, 1.0
                    )
        step = allocator.fetch_due(self._clock.now_ms())
        if step is not None:
            if self._background:
                threading.Thread(target=self._fetch_quietly, args=(step,), daemon=True).start()
            else:
                self._fetch(step)
        self._ready.extend(values[1:])
        return values[0]

    def _fetch_quietly(self, step: int) -> None:
        # A failed fetch was reported (fetch_failed): next_id fetches again.
        with contextlib.suppress(Exception):
            self._fetch(step)

    def _fetch(self, step: int) -> None:
        """Take the next ``step`` IDs of the tag and install them."""
        db = self.database
        try:
            while True:
                now = self._clock.now_ms()
                params = {"tag": self.tag, "step": step, "now_millis": now}
                with db.transaction(write=True) as raw:
                    row = None
                    if db.execrows(raw, "segment_fetch", params) == 1:
                        row = db.one(raw, "segment_load", {"tag": self.tag})
                if row is not None:
                    self._allocator.fetched(int(row["max_id"]), int(row["step"]), now)
                    break
                # No row yet: create the tag outside any transaction, then fetch again.
                with db.connection() as raw:
                    db.execrows(raw, "segment_create", params)
        except BaseException:
            self._allocator.fetch_failed()
            raise
        finally:
            with self._changed:
                self._changed.notify_all()
