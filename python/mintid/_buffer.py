"""IDs fetched from the core in bulk and handed out one at a time.

A call into the native library costs microseconds, so generators fetch a
batch of IDs per call and hand them out from a list, keeping every guarantee:

* **Unique and increasing.** A batch holds consecutive IDs from the core
  generator, which never repeats or goes back. Handing out is ``next()`` on
  one shared list iterator, which the GIL makes atomic (this relies on the
  GIL: free-threaded builds are not supported), so two threads never get the
  same ID and IDs leave in increasing order. A refill clears the old
  list first, so an iterator another thread still holds can yield nothing
  older than the new batch.
* **Fresh.** Each batch carries a deadline: the wall-clock nanosecond at
  which the tick of its first remaining ID ends (for 1 ms ticks, the moment
  that ID's timestamp falls 1 ms behind the clock). For a new batch that is
  the end of the tick the clock was in just before the core made it: the
  core stamps IDs with a clock reading taken later (or with a later tick),
  never an earlier one, so the deadline is never too late. An ID is taken
  first and the clock read after (``time.time_ns()``); an ID taken past the
  deadline is dropped, never handed out, and the stale head of the batch is
  skipped (asking the core for the exact tick of each ID it looks at).
* **Sized to the rate.** Each buffer measures how fast its IDs go out and
  fetches about as many as will go out before the current tick ends (up to
  a cap), so few IDs are made in vain.
* **Fork-safe.** In a child process every buffer is emptied, its lock
  replaced and the core's per-thread randomness reseeded (see
  :func:`register_for_fork`).

The fast path (take, read the clock, compare) is written out in each public
method for speed; this module holds the slow path it falls back to.
"""

from __future__ import annotations

import operator
import os
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any, Final, Generic, Protocol, TypeVar, cast

from mintid._native import call, ffi

__all__ = ["NEVER_STALE", "Batch", "Buffer", "millisecond_end_ns", "register_for_fork"]

T = TypeVar("T")

#: A batch: the iterator handing out its IDs and the wall-clock nanosecond
#: from which the next ID it yields counts as stale.
Batch = tuple[Iterator[T], int]

#: A deadline no clock reaches: for generators on a test clock, whose single
#: IDs are handed out at once.
NEVER_STALE: Final = 1 << 127

#: The size of a generator's first batch, before its rate is known.
_FIRST_BATCH: Final = 64
#: How much more than the measured rate a batch holds.
_HEADROOM: Final = 1.25

_NANOS_PER_MILLI: Final = 1_000_000

_NOTHING: Final = object()
_EMPTY: Final[Batch[object]] = (iter(()), 0)

_time_ns = time.time_ns


class Buffer(Generic[T]):
    """The slow path of a buffered generator: refills, staleness, fork reset.

    Subclasses say how to fetch ``count`` new IDs (:meth:`_fetch`) and when
    the tick containing a moment ends (:meth:`_tick_end_ns`); those whose
    batches can span ticks also say where the fresh part of a batch starts
    (:meth:`_first_fresh`). ``max_batch`` 1 turns buffering off.
    """

    __slots__ = (
        "__weakref__",
        "_batch",
        "_fetched_at",
        "_ids_per_ns",
        "_items",
        "_lock",
        "_max_batch",
        "_sibling",
    )

    def __init__(self, lock: threading.Lock, max_batch: int) -> None:
        """Start empty; the first request fetches the first batch."""
        self._batch: Batch[T] = cast("Batch[T]", _EMPTY)
        self._items: list[T] = []
        self._lock = lock
        self._max_batch = max_batch
        self._sibling: Buffer[Any] | None = None
        self._fetched_at = 0
        self._ids_per_ns = 0.0

    def exclusive_with(self, other: Buffer[Any]) -> None:
        """Make ``self`` and ``other`` (fed by one core generator, sharing one
        lock) drop each other's IDs on every refill, so that the IDs both hand
        out, taken together, increase too.
        """  # noqa: D205
        self._sibling = other
        other._sibling = self

    def _fetch(self, count: int) -> list[T]:
        """``count`` new consecutive IDs from the core (at least one)."""
        raise NotImplementedError

    def _tick_end_ns(self, now_ns: int) -> int:
        """The wall-clock nanosecond at which the tick containing ``now_ns`` ends."""
        raise NotImplementedError

    def _limit(self, count: int, deadline_ns: int) -> int:
        """How many of ``count`` wanted IDs to fetch for a batch with this deadline.
        The default takes them all; generators whose ticks hold few IDs say less.
        """  # noqa: D205
        return count

    def _first_fresh(self, items: list[T], start: int, now_ns: int) -> tuple[int, int]:
        """The index of the first of ``items[start:]`` still fresh at ``now_ns``, and
        the moment it goes stale; ``len(items)`` if none is. The default suits
        batches made from one clock reading: none is.
        """  # noqa: D205
        return len(items), 0

    def take_slow(self) -> T:
        """Hand out the next ID when the fast path found none, or a stale one."""
        with self._lock:
            while True:
                items, (batch, deadline) = self._items, self._batch
                item = next(batch, _NOTHING)
                if item is _NOTHING:
                    self._observe_rate(len(items))
                    self._refill()
                elif _time_ns() < deadline:
                    return cast("T", item)
                else:
                    self._skip_stale(items, batch)

    def drop(self) -> None:
        """Forget the buffered IDs (they are never handed out)."""
        self._items.clear()
        self._items = []
        self._batch = cast("Batch[T]", _EMPTY)

    def reset_after_fork(self, lock: threading.Lock) -> None:
        """In a fork child: drop the buffer and take a new lock."""
        self._lock = lock
        self.drop()

    def _refill(self) -> None:
        """Fetch a batch sized to last until the tick ends; clear the old list first."""
        if self._sibling is not None:
            self._sibling.drop()
        before = _time_ns()
        deadline = self._tick_end_ns(before)
        if self._ids_per_ns:
            wanted = int(self._ids_per_ns * (deadline - before) * _HEADROOM) + 1
        else:
            wanted = _FIRST_BATCH
        items = self._fetch(self._limit(max(1, min(wanted, self._max_batch)), deadline))
        self._items.clear()
        self._items = items
        self._batch = (iter(items), deadline)
        self._fetched_at = before

    def _observe_rate(self, handed_out: int) -> None:
        """Fold the rate at which the last batch went out into the estimate."""
        elapsed = _time_ns() - self._fetched_at
        if handed_out and elapsed > 0:
            rate = handed_out / elapsed
            self._ids_per_ns = (self._ids_per_ns + rate) / 2 if self._ids_per_ns else rate

    def _skip_stale(self, items: list[T], batch: Iterator[T]) -> None:
        """Drop the stale head of the batch; keep the IDs of later ticks, if any."""
        position = len(items) - operator.length_hint(batch)
        batch.__setstate__(len(items))  # type: ignore[attr-defined]
        fresh, deadline = self._first_fresh(items, position, _time_ns())
        if fresh < len(items):
            fresh_batch = iter(items)
            fresh_batch.__setstate__(fresh)  # type: ignore[attr-defined]
            self._batch = (fresh_batch, deadline)
            return
        self._observe_rate(position - 1)
        self.drop()


def millisecond_end_ns(now_ns: int) -> int:
    """The wall-clock nanosecond at which the millisecond containing ``now_ns`` ends."""
    return (now_ns // _NANOS_PER_MILLI + 1) * _NANOS_PER_MILLI


class _ForkAware(Protocol):
    def _after_fork_in_child(self) -> None: ...


_LIVE: weakref.WeakSet[_ForkAware] = weakref.WeakSet()


def register_for_fork(generator: _ForkAware) -> None:
    """Have ``generator._after_fork_in_child()`` called in every fork child."""
    _LIVE.add(generator)


def _after_fork_in_child() -> None:
    call(ffi.reseed_thread_entropy)
    for generator in list(_LIVE):
        generator._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
