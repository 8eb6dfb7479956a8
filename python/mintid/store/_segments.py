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

from mintid._native import call, ffi
from mintid._renamed import millis_renamed
from mintid._segment import SegmentPolicy
from mintid.errors import MintidError
from mintid.store._clock import StoreClock, SystemStoreClock
from mintid.store._database import Database, QueryRunner, drive

__all__ = ["SegmentIds"]

_EMPTY: Final[Iterator[int]] = iter(())


@millis_renamed
class SegmentIds:
    """IDs of one ``tag``, unique across every process sharing it and increasing
    within this one. Once the policy's share of a segment is used, the next is
    fetched in a background thread (double buffer), so :meth:`next_id` waits on
    the database only when the segments run out. A restart loses at most the
    unused rest of what was fetched. Thread-safe.
    """  # noqa: D205

    def __init__(
        self,
        database: Database,
        tag: str,
        policy: SegmentPolicy,
        *,
        clock: StoreClock | None = None,
        background: bool = True,
    ) -> None:
        """IDs of ``tag`` (1 to 64 ASCII characters, created on first use);
        ``background=False`` fetches inline, in the :meth:`next_id` call that
        makes the fetch due.
        """  # noqa: D205
        if not isinstance(policy, SegmentPolicy):
            raise TypeError(f"policy must be a SegmentPolicy, got {type(policy).__name__}")
        if not isinstance(tag, str):
            raise TypeError(f"tag must be a str, got {type(tag).__name__}")
        self.database = database
        self.tag = tag
        self.policy = policy
        self._clock: StoreClock = clock if clock is not None else SystemStoreClock()
        self._driver: Any = call(ffi.SegmentDriver, database.manifest, tag, policy._to_ffi())
        self._background = background
        self._ids: Iterator[int] = _EMPTY
        self._refill = threading.Lock()
        self._changed = threading.Condition()

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
            driver = self._driver
            while True:
                # Another thread may have taken a run meanwhile.
                for first in self._ids:
                    return first
                taken = driver.take(self._clock.now_millis())
                if taken.fetch_due:
                    if not taken.count:
                        self._fetch()
                    elif self._background:
                        threading.Thread(target=self._fetch_quietly, daemon=True).start()
                    else:
                        self._fetch_quietly()
                elif not taken.count:
                    with self._changed:
                        # Another caller's fetch is in flight: wait for it to end.
                        self._changed.wait_for(
                            lambda: driver.remaining() > 0 or not driver.fetch_in_flight(), 1.0
                        )
                if taken.count:
                    self._ids = iter(range(taken.first + 1, taken.first + taken.count))
                    return int(taken.first)

    def _fetch_quietly(self) -> None:
        # The driver has recorded the failure: the next take asks for the fetch again.
        with contextlib.suppress(Exception):
            self._fetch()

    def _fetch(self) -> None:
        """Run the due fetch's steps; its failure is raised as the core's typed error."""
        driver, clock = self._driver, self._clock
        try:
            drive(
                QueryRunner(self.database),
                clock,
                driver.fetch,
                lambda answer: driver.push(answer, clock.now_millis()),
                driver.resume,
            )
        except MintidError:
            raise  # the driver ended the fetch itself
        except BaseException:
            driver.abandon()
            raise
        finally:
            with self._changed:
                self._changed.notify_all()
