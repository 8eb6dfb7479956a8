"""Worker-id leases over ``worker_lease``, and :class:`LeasedSnowflake`, a
generator that issues IDs only while its lease is safe. The rules are the
core's :class:`~mintid.LeaseGuard`; this module runs ``lease_find``,
``lease_take``, … .
"""  # noqa: D205

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from mintid._lease import LeaseGuard, LeasePolicy, WorkerLease, acquire_lease, lease_none_found
from mintid._snowflake import Snowflake
from mintid.store._clock import StoreClock, SystemStoreClock
from mintid.store._database import Database, text
from mintid.store._errors import StoreUnavailableError

__all__ = ["LeasedSnowflake", "WorkerLeaseRow", "WorkerLeases"]


@dataclass(frozen=True)
class WorkerLeaseRow:
    """A row of ``worker_lease``."""

    worker_id: int
    #: The holder's identity, or ``None`` when free.
    owner: str | None
    fencing_token: int
    lease_deadline_ms: int
    high_water_ms: int


class WorkerLeases:
    """Worker-id leases in one database, under one :class:`~mintid.LeasePolicy`."""

    def __init__(
        self, database: Database, policy: LeasePolicy, *, clock: StoreClock | None = None
    ) -> None:
        """Leases over ``database``."""
        if not isinstance(policy, LeasePolicy):
            raise TypeError(f"policy must be a LeasePolicy, got {type(policy).__name__}")
        self.database = database
        self.policy = policy
        self.clock: StoreClock = clock if clock is not None else SystemStoreClock()

    def acquire(self, owner: str) -> LeaseGuard:
        """Take the lowest free or expired worker id for ``owner`` (host/pod/process).

        Raises :class:`~mintid.LeaseNoWorkerFreeError` when every worker id is
        held, :class:`~mintid.store.StoreUnavailableError`.
        """
        db = self.database
        while True:
            now = self.clock.now_ms()
            window = {"max_worker": self.policy.max_worker, "now_millis": now}
            guard: LeaseGuard | None = None
            found = False
            with db.transaction(write=True) as raw:
                row = db.one(raw, "lease_find", window)
                if row is not None:
                    found = True
                    made = acquire_lease(
                        WorkerLease(
                            int(row["worker_id"]),
                            int(row["fencing_token"]),
                            int(row["lease_deadline_millis"]),
                            int(row["high_water_millis"]),
                            row["owner"] is not None,
                        ),
                        now,
                        self.policy,
                    )
                    taken = db.execrows(
                        raw,
                        "lease_take",
                        {
                            "worker_id": made.lease.worker_id,
                            "owner": owner,
                            "fencing_token": made.lease.fencing_token,
                            "lease_deadline_millis": made.lease.lease_deadline_ms,
                            "high_water_millis": made.lease.high_water_ms,
                            "expected_token": made.expected_token,
                            "now_millis": made.acquired_ms,
                        },
                    )
                    if taken == 1:
                        guard = LeaseGuard(made, self.policy)
            if guard is not None:
                return guard
            if not found:
                self._none_found(window)

    def _none_found(self, window: dict[str, int]) -> None:
        with self.database.connection() as raw:
            count = self.database.one(raw, "lease_count", window) or {}
            present, free = int(count.get("present_count") or 0), int(count.get("free_count") or 0)
            if lease_none_found(present, free, self.policy) == "seed":
                self.database.execrows(raw, "lease_seed", window)

    def renew(self, guard: LeaseGuard, high_water_ms: int) -> None:
        """Renew ``guard``'s lease, storing ``high_water_ms``; the guard learns
        the outcome. Raises :class:`~mintid.LeaseLostError`, … ;
        :class:`~mintid.store.StoreUnavailableError` (the guard counts a failed
        renewal).
        """  # noqa: D205
        now = self.clock.now_ms()
        renewal = guard.renewal(now, high_water_ms)
        try:
            with self.database.connection() as raw:
                rows = self.database.execrows(
                    raw,
                    "lease_renew",
                    {
                        "worker_id": renewal.worker_id,
                        "fencing_token": renewal.fencing_token,
                        "lease_deadline_millis": renewal.lease_deadline_ms,
                        "high_water_millis": renewal.high_water_ms,
                        "now_millis": renewal.now_ms,
                    },
                )
        except StoreUnavailableError:
            guard.renewal_failed(now)
            raise
        guard.renewed(renewal, rows)

    def release(self, guard: LeaseGuard, high_water_ms: int) -> bool:
        """Release ``guard``'s lease with the high-water mark; whether the row was still its."""
        release = guard.release(self.clock.now_ms(), high_water_ms)
        with self.database.connection() as raw:
            rows = self.database.execrows(
                raw,
                "lease_release",
                {
                    "worker_id": release.worker_id,
                    "fencing_token": release.fencing_token,
                    "high_water_millis": release.high_water_ms,
                    "now_millis": release.now_ms,
                },
            )
        return rows == 1

    def load(self, worker_id: int) -> WorkerLeaseRow | None:
        """The row of ``worker_id``, or ``None``."""
        with self.database.connection() as raw:
            row = self.database.one(raw, "lease_load", {"worker_id": worker_id})
        if row is None:
            return None
        return WorkerLeaseRow(
            int(row["worker_id"]),
            text(row["owner"]),
            int(row["fencing_token"]),
            int(row["lease_deadline_millis"]),
            int(row["high_water_millis"]),
        )


class LeasedSnowflake:
    """A Snowflake generator on a leased worker id: it starts after the previous
    holder's high-water mark, renews the lease from a daemon thread, and refuses
    to issue (a :class:`~mintid.LeaseError`) once the lease is lost or could not
    be renewed before its stop point. :meth:`close` (or the end of a ``with``
    block) stops the heartbeat and releases the lease with the high-water mark.
    """  # noqa: D205

    def __init__(self, leases: WorkerLeases, guard: LeaseGuard) -> None:
        """A generator on ``guard``, a lease ``leases`` acquired and that may
        issue now; :meth:`acquire` makes both.
        """  # noqa: D205
        self._leases = leases
        self.guard = guard
        self._snowflake = Snowflake(
            worker=self.guard.worker_id,
            layout=leases.policy.layout,
            starting_after_unix_ms=self.guard.start_after_ms,
        )
        self._high_water_ms = self.guard.start_after_ms
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._closed = False
        self._heartbeat = threading.Thread(
            target=self._beat, name=f"mintid-lease-{self.guard.worker_id}", daemon=True
        )
        self._heartbeat.start()

    @classmethod
    def acquire(cls, leases: WorkerLeases, owner: str) -> LeasedSnowflake:
        """Acquire a worker id for ``owner`` and wait until the new holder may
        issue (the previous holder's clock-skew bound).

        Raises :class:`~mintid.LeaseNoWorkerFreeError`,
        :class:`~mintid.store.StoreUnavailableError`.
        """  # noqa: D205
        guard = leases.acquire(owner)
        wait = guard.ready_at_ms - leases.clock.now_ms()
        if wait > 0:
            leases.clock.pause_ms(wait)
        return cls(leases, guard)

    @property
    def worker_id(self) -> int:
        """The leased worker id."""
        return self.guard.worker_id

    def next_id(self) -> int:
        """The next ID, admitted by the lease's guard (raises a ``LeaseError`` once unsafe)."""
        now = self._leases.clock.now_ms()
        self.guard.check(now)
        snowflake_id = self._snowflake.next_id()
        self.guard.admit(snowflake_id)
        with self._lock:
            self._high_water_ms = max(self._high_water_ms, now)
        return snowflake_id

    def _high_water(self) -> int:
        # IDs come from a buffer: its newest may carry a later time than any handed out.
        issued = self._snowflake.high_water
        issued_ms = 0 if issued is None else self._snowflake.decode(issued).unix_ms
        with self._lock:
            return max(self._high_water_ms, issued_ms)

    def _beat(self) -> None:
        tick = max(0.001, min(1.0, self._leases.policy.renew_interval_ms / 10_000))
        while not self._stop.wait(tick):
            if not self.guard.is_live:
                return
            if self.guard.renew_due(self._leases.clock.now_ms()):
                try:
                    self._leases.renew(self.guard, self._high_water())
                except Exception:  # the guard counted it; it stops issuing in time
                    continue

    def close(self) -> bool:
        """Stop the heartbeat and release the lease; whether the row was still ours.

        Raises :class:`~mintid.store.StoreUnavailableError` when the release
        cannot be written: the lease then ends at its deadline, and the next
        holder waits out the clock-skew bound.
        """
        if self._closed:
            return False
        self._closed = True
        self._stop.set()
        self._heartbeat.join()
        if not self.guard.is_live:
            return False
        return self._leases.release(self.guard, self._high_water())

    def __enter__(self) -> LeasedSnowflake:
        """Use as a context manager."""
        return self

    def __exit__(self, *_exc: Any) -> None:
        """Close: release the lease."""
        self.close()
