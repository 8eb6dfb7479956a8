"""Generator policies: what to do when the clock goes back or a tick is full."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from mintid._native import check_uint, ffi

__all__ = ["RollbackPolicy", "SequencePolicy"]


@dataclass(frozen=True)
class RollbackPolicy:
    """What a generator does when the clock reads earlier than before.

    No policy ever returns a duplicate: the worst outcome of each is an error.
    Build one with :meth:`fail`, :meth:`wait` or :meth:`logical`.
    """

    kind: Literal["fail", "wait", "logical"]
    #: The largest rollback tolerated, in milliseconds (0 for ``fail``).
    max_millis: int = 0

    def __post_init__(self) -> None:
        """Check the kind and the bound."""
        if self.kind not in ("fail", "wait", "logical"):
            raise ValueError(f"unknown rollback policy kind {self.kind!r}")
        check_uint("max_millis", self.max_millis)

    @classmethod
    def fail(cls) -> RollbackPolicy:
        """Fail at once."""
        return cls("fail")

    @classmethod
    def wait(cls, max_millis: int) -> RollbackPolicy:
        """Wait for the clock to catch up, for at most ``max_millis`` of rollback."""
        return cls("wait", max_millis)

    @classmethod
    def logical(cls, max_millis: int) -> RollbackPolicy:
        """Keep issuing from the last timestamp while the clock is at most ``max_millis`` behind."""
        return cls("logical", max_millis)

    def _to_ffi(self) -> Any:  # one of the generated variant classes
        if self.kind == "fail":
            return ffi.RollbackPolicy.FAIL()  # type: ignore[no-untyped-call]
        if self.kind == "wait":
            return ffi.RollbackPolicy.WAIT(self.max_millis)
        return ffi.RollbackPolicy.LOGICAL(self.max_millis)


@dataclass(frozen=True)
class SequencePolicy:
    """What a Snowflake generator does when a tick's sequence numbers are used up.

    :meth:`wait` (the default) waits for the next tick; :meth:`borrow_ahead`
    issues from following ticks, at most ``max_ticks`` ahead of the clock.
    """

    kind: Literal["wait", "borrow_ahead"]
    #: How many ticks IDs may run ahead of the clock (0 for ``wait``).
    max_ticks: int = 0

    def __post_init__(self) -> None:
        """Check the kind and the bound."""
        if self.kind not in ("wait", "borrow_ahead"):
            raise ValueError(f"unknown sequence policy kind {self.kind!r}")
        check_uint("max_ticks", self.max_ticks)

    @classmethod
    def wait(cls) -> SequencePolicy:
        """Wait for the clock to reach the next tick."""
        return cls("wait")

    @classmethod
    def borrow_ahead(cls, max_ticks: int) -> SequencePolicy:
        """Issue from following ticks, at most ``max_ticks`` ahead of the clock."""
        return cls("borrow_ahead", max_ticks)

    def _to_ffi(self) -> Any:  # one of the generated variant classes
        if self.kind == "wait":
            return ffi.SequencePolicy.WAIT()  # type: ignore[no-untyped-call]
        return ffi.SequencePolicy.BORROW_AHEAD(self.max_ticks)
