"""Segment allocators: IDs from a database counter, a segment at a time."""

from __future__ import annotations

from dataclasses import dataclass

from mintid._buffer import register_for_fork
from mintid._native import call, check_uint, ffi, ids_from_bytes

__all__ = ["SegmentAllocator", "SegmentPolicy"]


@dataclass(frozen=True, init=False)
class SegmentPolicy:
    """How a segment allocator sizes its fetches; values left out keep the
    core's defaults (steps from 1000 within 100 to 1 000 000, fetch at 10 %
    used; double below 15 min, halve above 30).
    """  # noqa: D205

    initial_step: int
    min_step: int
    max_step: int
    fetch_at_percent: int
    grow_below_millis: int
    shrink_above_millis: int

    def __init__(
        self,
        initial_step: int | None = None,
        min_step: int | None = None,
        max_step: int | None = None,
        *,
        fetch_at_percent: int | None = None,
        grow_below_millis: int | None = None,
        shrink_above_millis: int | None = None,
    ) -> None:
        """Check the policy with the core and hold its values."""
        made = call(
            ffi.segment_policy_new,
            None if initial_step is None else check_uint("initial_step", initial_step),
            None if min_step is None else check_uint("min_step", min_step),
            None if max_step is None else check_uint("max_step", max_step),
            None
            if fetch_at_percent is None
            else check_uint("fetch_at_percent", fetch_at_percent, 8),
            None
            if grow_below_millis is None
            else check_uint("grow_below_millis", grow_below_millis),
            None
            if shrink_above_millis is None
            else check_uint("shrink_above_millis", shrink_above_millis),
        )
        for name, value in (
            ("initial_step", made.initial_step),
            ("min_step", made.min_step),
            ("max_step", made.max_step),
            ("fetch_at_percent", made.fetch_at_percent),
            ("grow_below_millis", made.grow_below_millis),
            ("shrink_above_millis", made.shrink_above_millis),
        ):
            object.__setattr__(self, name, value)

    def _to_ffi(self) -> ffi.SegmentPolicy:
        return ffi.SegmentPolicy(
            initial_step=self.initial_step,
            min_step=self.min_step,
            max_step=self.max_step,
            fetch_at_percent=self.fetch_at_percent,
            grow_below_millis=self.grow_below_millis,
            shrink_above_millis=self.shrink_above_millis,
        )

    def adapt(self, step: int, lasted_millis: int) -> int:
        """The step after a segment of ``step`` IDs lasted ``lasted_millis``."""
        return call(
            ffi.segment_adapt,
            self._to_ffi(),
            check_uint("step", step),
            check_uint("lasted_millis", lasted_millis),
        )


class SegmentAllocator:
    """IDs for one tag, handed out from segments the host fetches with
    ``segment_fetch`` when :meth:`fetch_due` says so. Thread-safe.
    """  # noqa: D205

    __slots__ = ("__weakref__", "_core")

    def __init__(self, policy: SegmentPolicy) -> None:
        """An allocator with no segment yet."""
        if not isinstance(policy, SegmentPolicy):
            raise TypeError(f"policy must be a SegmentPolicy, got {type(policy).__name__}")
        self._core = call(ffi.SegmentAllocator, policy._to_ffi())
        register_for_fork(self)

    def _after_fork_in_child(self) -> None:
        # The parent holds the same segments: the core forgets them (gaps, never duplicates).
        self._core.forget_after_fork()

    def next_id(self) -> int | None:
        """The next ID, or ``None`` when the segments ran out (fetch one)."""
        return self._core.next_id()

    def fill(self, count: int) -> list[int]:
        """Up to ``count`` IDs; fewer when the segments run out."""
        return ids_from_bytes(call(self._core.fill, check_uint("count", count, 32)))

    @property
    def remaining(self) -> int:
        """How many IDs are left in memory."""
        return self._core.remaining()

    @property
    def step(self) -> int:
        """The step of the next fetch."""
        return self._core.step()

    @property
    def fetch_in_flight(self) -> bool:
        """Whether a fetch is under way."""
        return self._core.fetch_in_flight()

    def fetch_due(self, now_millis: int) -> int | None:
        """The step of the fetch due at ``now_millis`` (it is then in flight), if one is."""
        return self._core.fetch_due(check_uint("now_millis", now_millis))

    def fetched(self, max_id: int, step: int, now_millis: int) -> None:
        """Report the row ``segment_load`` returned after the fetch."""
        call(
            self._core.fetched,
            check_uint("max_id", max_id),
            check_uint("step", step),
            check_uint("now_millis", now_millis),
        )

    def fetch_failed(self) -> None:
        """Report a fetch that failed; the next :meth:`fetch_due` asks again."""
        self._core.fetch_failed()
