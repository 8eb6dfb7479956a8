"""Deterministic time for tests: a clock that moves only when told to.

Pass a :class:`ManualClock` (and, for UUIDv7, fixed ``entropy`` bytes) to a
generator to make its output reproducible. Such a generator makes each ID on
request instead of from a buffer, since buffered IDs are checked against the
wall clock.
"""

from __future__ import annotations

from mintid._native import call, check_uint, ffi

__all__ = ["ManualClock"]


class ManualClock:
    """A clock reading a fixed Unix millisecond until set or moved."""

    __slots__ = ("_core",)

    def __init__(self, unix_millis: int, *, advance_on_pause: bool = False) -> None:
        """Start at ``unix_millis``; with ``advance_on_pause`` a generator's waits move it."""
        self._core = call(
            ffi.ManualClock, check_uint("unix_millis", unix_millis), bool(advance_on_pause)
        )

    @property
    def unix_millis(self) -> int:
        """The time, in Unix milliseconds."""
        return call(self._core.now_millis)

    def set(self, unix_millis: int) -> None:
        """Set the time, forwards or backwards."""
        call(self._core.set_millis, check_uint("unix_millis", unix_millis))

    def advance(self, millis: int) -> None:
        """Move the time forward."""
        call(self._core.advance_millis, check_uint("millis", millis))

    def rewind(self, millis: int) -> None:
        """Move the time back (a clock rollback), stopping at zero."""
        call(self._core.rewind_millis, check_uint("millis", millis))

    def __repr__(self) -> str:
        """Show the time."""
        return f"ManualClock({self.unix_millis})"
