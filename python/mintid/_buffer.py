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
* **Fresh, and sized to the rate: the core's rule.** For each batch the core
  says until when its IDs may be handed out and how large it is (docs/spec.md,
  "The ID buffer rule"): a refill tells the core how many IDs the previous
  batch handed out, and gets the next batch with the last Unix millisecond
  at which its IDs may go out (its first ID's tick plus one tick). An ID is
  taken first and the clock read after (``time.time_ns()``); an ID taken past
  that millisecond is dropped with the rest of its batch, never handed out.
* **Fork-safe.** In a child process every buffer is emptied, its lock
  replaced and the core's per-thread randomness reseeded (see
  :func:`register_for_fork`).

The fast path (take, read the clock, compare) is written out in each public
method for speed; this module holds the slow path it falls back to.
"""

from __future__ import annotations

import operator
import os
import time
import weakref
from collections.abc import Iterator

from mintid._library import entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _thread import LockType
    from typing import Any, Final, Generic, Protocol, TypeVar, cast

    class _ForkAware(Protocol):
        def _after_fork_in_child(self) -> None: ...

else:
    # A program's first ID imports this module, and `typing` (with `re`, `enum`, ...)
    # costs more than that ID: stand-ins for the three names used at run time.
    def TypeVar(name):  # noqa: N802
        return name

    def cast(kind, value):
        return value

    class Generic:
        __slots__ = ()

        def __class_getitem__(cls, item):
            return cls


__all__ = ["NEVER_STALE", "Batch", "Buffer", "register_for_fork"]

T = TypeVar("T")

#: A batch: the iterator handing out its IDs and the wall-clock nanosecond
#: from which the next ID it yields counts as stale.
Batch = tuple[Iterator[T], int]

#: A deadline no clock reaches: for generators on a test clock, whose single
#: IDs are handed out at once.
NEVER_STALE: Final = 1 << 127

_NANOS_PER_MILLI: Final = 1_000_000

_NOTHING: Final = object()
_EMPTY: Final[Batch[object]] = (iter(()), 0)

_time_ns = time.time_ns


class Buffer(Generic[T]):
    """The slow path of a buffered generator: refills, staleness, fork reset.

    Subclasses say how to fetch the next batch the core's rule makes
    (:meth:`_fetch`) and, for generators on a test clock (``unbuffered``),
    a single ID (:meth:`_fetch_one`), handed out at once.
    """

    __slots__ = ("__weakref__", "_batch", "_items", "_lock", "_sibling", "_unbuffered")

    def __init__(self, lock: LockType, unbuffered: bool) -> None:
        """Start empty; the first request fetches the first batch."""
        self._batch: Batch[T] = cast("Batch[T]", _EMPTY)
        self._items: list[T] = []
        self._lock = lock
        self._unbuffered = unbuffered
        self._sibling: Buffer[Any] | None = None

    def exclusive_with(self, other: Buffer[Any]) -> None:
        """Make ``self`` and ``other`` (fed by one core generator, sharing one
        lock) drop each other's IDs on every refill, so that the IDs both hand
        out, taken together, increase too.
        """  # noqa: D205
        self._sibling = other
        other._sibling = self

    def _fetch(self, handed_out: int) -> tuple[list[T], int]:
        """The core's next batch after one that handed out ``handed_out`` IDs, and
        the last Unix millisecond at which its IDs may be handed out.
        """  # noqa: D205
        raise NotImplementedError

    def _fetch_one(self) -> T:
        """One new ID from the core (a generator on a test clock)."""
        raise NotImplementedError

    def take_slow(self) -> T:
        """Hand out the next ID when the fast path found none, or a stale one."""
        with self._lock:
            while True:
                items, (batch, deadline) = self._items, self._batch
                item = next(batch, _NOTHING)
                if item is _NOTHING:
                    self._refill(len(items))
                elif _time_ns() < deadline:
                    return cast("T", item)
                else:
                    # Stale: the rest of the batch is dropped; the ones before this went out.
                    self._refill(len(items) - operator.length_hint(batch) - 1)

    def drop(self) -> None:
        """Forget the buffered IDs (they are never handed out)."""
        self._items.clear()
        self._items = []
        self._batch = cast("Batch[T]", _EMPTY)

    def reset_after_fork(self, lock: LockType) -> None:
        """In a fork child: drop the buffer and take a new lock."""
        self._lock = lock
        self.drop()

    def _refill(self, handed_out: int) -> None:
        """Fetch the next batch; clear the old list first."""
        if self._sibling is not None:
            self._sibling.drop()
        if self._unbuffered:
            items, deadline = [self._fetch_one()], NEVER_STALE
        else:
            items, fresh_until = self._fetch(max(0, handed_out))
            # Fresh while the clock's millisecond is at most fresh_until.
            deadline = (fresh_until + 1) * _NANOS_PER_MILLI
        self._items.clear()
        self._items = items
        self._batch = (iter(items), deadline)


_LIVE: weakref.WeakSet[_ForkAware] = weakref.WeakSet()


def register_for_fork(generator: _ForkAware) -> None:
    """Have ``generator._after_fork_in_child()`` called in every fork child."""
    _LIVE.add(generator)


def _after_fork_in_child() -> None:
    entry("mintid_light_reseed_thread_entropy", None)()
    for generator in list(_LIVE):
        generator._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
