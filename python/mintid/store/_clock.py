"""The clock of the storage adapters: Unix milliseconds and pauses."""

from __future__ import annotations

import time
from typing import Protocol

__all__ = ["StoreClock", "SystemStoreClock"]


class StoreClock(Protocol):
    """Where an adapter reads the time it sends as ``now_millis``, and how it waits."""

    def now_millis(self) -> int:
        """The time in Unix milliseconds."""
        ...

    def pause_millis(self, millis: int) -> None:
        """Wait ``millis`` milliseconds."""
        ...


class SystemStoreClock:
    """The system clock and ``time.sleep``."""

    def now_millis(self) -> int:
        """The wall clock in Unix milliseconds."""
        return time.time_ns() // 1_000_000

    def pause_millis(self, millis: int) -> None:
        """Sleep ``millis`` milliseconds."""
        time.sleep(millis / 1000)
