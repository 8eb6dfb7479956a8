"""Worker-id leases over ``worker_lease`` (the core's lease drivers and
:class:`~mintid.LeaseGuard`), and :class:`LeasedSnowflake`, a generator that issues
IDs only while its lease is safe.
"""  # noqa: D205

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

from mintid import _wire_codec as codec
from mintid._lease import Acquisition, LeaseGuard, LeasePolicy, WorkerLease
from mintid._native import check_uint
from mintid._snowflake_generator import Snowflake
from mintid._wire import Wire, driving, once, run, spec
from mintid.store._clock import StoreClock, SystemStoreClock
from mintid.store._database import Database, QueryRunner, shutdown_wait_seconds, text
from mintid.store._metrics import StoreMetrics, recording

__all__ = ["LeasedBase", "LeasedSnowflake", "LeasesBase", "WorkerLeaseRow", "WorkerLeases"]


@dataclass(frozen=True)
class WorkerLeaseRow:
    """A row of ``worker_lease``."""

    worker_id: int
    #: The holder's identity, or ``None`` when free.
    owner: str | None
    fencing_token: int
    lease_deadline_millis: int
    high_water_millis: int


class LeasesBase:
    """Worker-id leases, sync or async: the step loops of the core's lease drivers,
    run by :class:`WorkerLeases` and :class:`mintid.store.aio.AsyncWorkerLeases`.
    """  # noqa: D205

    #: The clock (a :class:`~mintid.store.StoreClock` or an async store's).
    clock: StoreClock | Any

    def __init__(
        self, database: Any, policy: LeasePolicy, clock: Any, metrics: StoreMetrics | None
    ) -> None:
        """Leases over ``database``, reporting database errors to ``metrics``."""
        if not isinstance(policy, LeasePolicy):
            raise TypeError(f"policy must be a LeasePolicy, got {type(policy).__name__}")
        self.database = database
        self.policy = policy
        self.clock = clock
        #: Where the database errors are reported.
        self.metrics, self._metrics = recording(metrics)

    def _runner(self) -> Any:
        self.database.bound()
        return QueryRunner(self.database, None, self._metrics)

    def _acquiring(self, owner: str, timeout_millis: int | None) -> Generator[Any, Any, LeaseGuard]:
        timeout = None if timeout_millis is None else check_uint("timeout_millis", timeout_millis)
        fields = codec.lease_policy(self.policy) + codec.raw(codec.error_bytes(owner))
        packed = spec(
            codec.LEASE_ACQUIRE, self.database.manifest, fields + codec.optional(timeout, codec.u64)
        )
        made = codec.acquired((yield from once(self._runner(), self.clock, packed)))
        worker, token, deadline, start_after, ready_at, acquired, high_water, expected = made
        row = WorkerLease(worker, token, deadline, high_water, True)
        return LeaseGuard(Acquisition(row, expected, acquired, start_after, ready_at), self.policy)

    def _marking(
        self, kind: int, guard: LeaseGuard, high_water: int | Callable[[], int]
    ) -> Generator[Any, Any, bytes]:
        """The step loop of a renewal or release (``kind``) of ``guard``, storing
        ``high_water`` (a function: read once the wire is made, which for a
        release stops the guard issuing first).
        """  # noqa: D205
        if not isinstance(guard, LeaseGuard):
            raise TypeError(f"guard must be a LeaseGuard, got {type(guard).__name__}")
        wire = Wire(spec(kind, self.database.manifest, codec.u64(guard._core.wire_id())))
        mark = check_uint("high_water_millis", high_water() if callable(high_water) else high_water)
        return (
            yield from driving(
                self._runner(),
                self.clock,
                wire,
                wire.call(codec.mark(mark, self.clock.now_millis())),
            )
        )

    @staticmethod
    def _row(rows: Sequence[Sequence[Any]]) -> WorkerLeaseRow | None:
        """The row ``lease_load`` found (its first columns, in ``SELECT`` order), if any."""
        if not rows:
            return None
        worker, owner, token, deadline, high_water = rows[0][:5]
        return WorkerLeaseRow(int(worker), text(owner), int(token), int(deadline), int(high_water))


class WorkerLeases(LeasesBase):
    """Worker-id leases in one database, under one :class:`~mintid.LeasePolicy`."""

    database: Database
    clock: StoreClock

    def __init__(
        self,
        database: Database,
        policy: LeasePolicy,
        *,
        clock: StoreClock | None = None,
        metrics: StoreMetrics | None = None,
    ) -> None:
        """Leases over ``database``; the database errors go to ``metrics`` (by
        default OpenTelemetry's, as :class:`~mintid.store.IdempotencyStore`'s).
        """  # noqa: D205
        used = clock if clock is not None else SystemStoreClock()
        super().__init__(database, policy, used, metrics)

    def acquire(self, owner: str, timeout_millis: int | None = None) -> LeaseGuard:
        """Take the lowest usable free or expired worker id for ``owner``
        (host/pod/process), seeding the table on first use, and return once the
        new holder may issue (after an expired lease: the previous holder's
        clock-skew bound). A free row whose high-water mark lies too far ahead
        of this clock is skipped for the next one. With ``timeout_millis``, wait up
        to that long for a worker id to become usable.

        Raises :class:`~mintid.LeaseNoWorkerFreeError` (every worker id held),
        ``lease.high_water_ahead`` (only rows too far ahead free; both without
        ``timeout_millis``), ``lease.acquire_timeout``,
        :class:`~mintid.store.StoreUnavailableError`.
        """  # noqa: D205
        return run(self._acquiring(owner, timeout_millis))

    def renew(self, guard: LeaseGuard, high_water_millis: int) -> None:
        """Renew ``guard``'s lease, storing ``high_water_millis``; the guard learns
        the outcome. A renewal the clock refuses (``lease.clock_behind``,
        ``lease.expired``) or the database does not answer counts as a failed
        attempt: the next one is due after the policy's retry delay.

        Raises :class:`~mintid.LeaseLostError`, … ;
        :class:`~mintid.store.StoreUnavailableError`.
        """  # noqa: D205
        run(self._marking(codec.LEASE_RENEW, guard, high_water_millis))

    def release(self, guard: LeaseGuard, high_water_millis: int | Callable[[], int]) -> bool:
        """Release ``guard``'s lease with the high-water mark; whether the row
        was still its. ``guard`` stops issuing first; ``high_water_millis`` may be
        a function, read after that (the generator's own high-water time).
        """  # noqa: D205
        return run(self._marking(codec.LEASE_RELEASE, guard, high_water_millis))[1] != 0

    def load(self, worker_id: int) -> WorkerLeaseRow | None:
        """The row of ``worker_id``, or ``None``."""
        with self.database.connection() as raw:
            return self._row(self.database.query(raw, "lease_load", [worker_id]))  # type: ignore[arg-type]


class LeasedBase:
    """A generator on a leased worker id, sync or async: its high-water time and the
    admission of each ID (the I/O-free part of :class:`LeasedSnowflake`).
    """  # noqa: D205

    def __init__(self, leases: LeasesBase, guard: LeaseGuard) -> None:
        """A generator on ``guard``, a lease ``leases`` acquired and that may issue now."""
        self._leases = leases
        self.guard = guard
        self._snowflake = Snowflake(
            worker=self.guard.worker_id,
            layout=leases.policy.layout,
            starting_after_unix_millis=self.guard.start_after_millis,
        )
        self._closed = False

    @property
    def worker_id(self) -> int:
        """The leased worker id."""
        return self.guard.worker_id

    @property
    def high_water_millis(self) -> int:
        """No ID issued so far carries a later time (Unix ms): the generator's
        high-water time (IDs come from a buffer: its newest counts), or the
        lease's start point before the first ID.
        """  # noqa: D205
        issued = self._snowflake.high_water
        issued_millis = 0 if issued is None else self._snowflake.decode(issued).unix_millis
        return max(self.guard.start_after_millis, issued_millis)

    def next_id(self) -> int:
        """The next ID, admitted by the lease's guard (raises a ``LeaseError`` once unsafe)."""
        self.guard.check(self._leases.clock.now_millis())
        snowflake_id = self._snowflake.next_id()
        self.guard.admit(snowflake_id)
        return snowflake_id

    def _wait_ms(self) -> int | None:
        """How long the heartbeat waits for the next renewal; ``None`` once the lease is over."""
        if not self.guard.is_live:
            return None
        now_millis: int = self._leases.clock.now_millis()
        return max(0, self.guard.next_renewal_at_millis - now_millis)


class LeasedSnowflake(LeasedBase):
    """A Snowflake generator on a leased worker id (on the leases' policy's
    layout): it starts after the previous holder's high-water mark, renews the
    lease from a daemon thread when the guard says the next renewal is due,
    and refuses to issue (a :class:`~mintid.LeaseError`) once the lease is
    lost or could not be renewed before its stop point. :meth:`close` (or the
    end of a ``with`` block) stops the heartbeat and releases the lease with
    the generator's own high-water time, read after it stopped issuing.
    """  # noqa: D205

    _leases: WorkerLeases

    def __init__(self, leases: WorkerLeases, guard: LeaseGuard) -> None:
        """A generator on ``guard``, a lease ``leases`` acquired and that may
        issue now; :meth:`acquire` makes both.
        """  # noqa: D205
        super().__init__(leases, guard)
        self._stop = threading.Event()
        self._heartbeat = threading.Thread(
            target=self._beat, name=f"mintid-lease-{self.guard.worker_id}", daemon=True
        )
        self._heartbeat.start()

    @classmethod
    def acquire(
        cls, leases: WorkerLeases, owner: str, timeout_millis: int | None = None
    ) -> LeasedSnowflake:
        """Acquire a worker id for ``owner`` (waiting until the new holder may
        issue, and up to ``timeout_millis`` for a usable worker id).

        Raises :class:`~mintid.LeaseNoWorkerFreeError`, ``lease.acquire_timeout``,
        :class:`~mintid.store.StoreUnavailableError`.
        """  # noqa: D205
        return cls(leases, leases.acquire(owner, timeout_millis))

    def _beat(self) -> None:
        while (wait_millis := self._wait_ms()) is not None:
            if self._stop.wait(wait_millis / 1000):
                return
            with contextlib.suppress(Exception):  # counted by the core; next_id reports it
                self._leases.renew(self.guard, self.high_water_millis)

    def release(self) -> bool:
        """Stop the heartbeat and release the lease, once: whether the row was still ours.

        ``False`` when the lease was lost, or on a second call; ``release()`` in every host.

        Raises :class:`~mintid.store.StoreUnavailableError` when the release
        cannot be written: the lease then ends at its deadline, and the next
        holder waits out the clock-skew bound.
        """
        if self._closed:
            return False
        self._closed = True
        self._stop.set()
        # A renewal in flight ends first, for at most the core's shutdown wait (then the
        # daemon thread is left: its lease ends at its deadline).
        self._heartbeat.join(shutdown_wait_seconds())
        return self._leases.release(self.guard, lambda: self.high_water_millis)

    def close(self) -> bool:
        """:meth:`release`, under the name of a closable resource."""
        return self.release()

    def __enter__(self) -> LeasedSnowflake:
        """Use as a context manager: :meth:`release` at its end."""
        return self

    def __exit__(self, *_exc: Any) -> None:
        """Release the lease."""
        self.release()
