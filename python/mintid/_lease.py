"""Worker-id leases: each running process takes a Snowflake worker id from a
shared table, renews it, and never hands out an ID another holder could.
"""  # noqa: D205

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from mintid._native import call, check_uint, ffi
from mintid._snowflake import SnowflakeLayout

__all__ = [
    "Acquisition",
    "LeaseGuard",
    "LeasePolicy",
    "LeaseRelease",
    "LeaseRenewal",
    "WorkerLease",
    "acquire_lease",
    "lease_none_found",
]


def _optional(name: str, value: int | None) -> int | None:
    return None if value is None else check_uint(name, value)


class LeasePolicy:
    """How the worker ids of a layout are leased; values left out keep the
    core's defaults (a 30 s lease renewed every 10 s, stopping 5 s early).
    """  # noqa: D205

    __slots__ = (
        "_core",
        "layout",
        "lease_millis",
        "max_skew_millis",
        "max_start_wait_millis",
        "max_worker",
        "renew_interval_millis",
        "renew_retry_millis",
        "safety_margin_millis",
    )

    layout: SnowflakeLayout
    max_worker: int
    lease_millis: int
    renew_interval_millis: int
    renew_retry_millis: int
    safety_margin_millis: int
    max_skew_millis: int
    max_start_wait_millis: int

    def __init__(
        self,
        layout: SnowflakeLayout | str = "classic",
        *,
        lease_millis: int | None = None,
        renew_interval_millis: int | None = None,
        safety_margin_millis: int | None = None,
        renew_retry_millis: int | None = None,
        max_skew_millis: int | None = None,
        max_start_wait_millis: int | None = None,
    ) -> None:
        """Check and hold the policy."""
        if isinstance(layout, str):
            layout = SnowflakeLayout.preset(layout)
        if not isinstance(layout, SnowflakeLayout):
            raise TypeError(f"layout must be a SnowflakeLayout or str, got {type(layout).__name__}")
        core = call(
            ffi.LeasePolicy,
            layout._core,
            _optional("lease_millis", lease_millis),
            _optional("renew_interval_millis", renew_interval_millis),
            _optional("safety_margin_millis", safety_margin_millis),
            _optional("renew_retry_millis", renew_retry_millis),
            _optional("max_skew_millis", max_skew_millis),
            _optional("max_start_wait_millis", max_start_wait_millis),
        )
        self._core = core
        self.layout = layout
        self.max_worker = core.max_worker()
        self.lease_millis = core.lease_millis()
        self.renew_interval_millis = core.renew_interval_millis()
        self.renew_retry_millis = core.renew_retry_millis()
        self.safety_margin_millis = core.safety_margin_millis()
        self.max_skew_millis = core.max_skew_millis()
        self.max_start_wait_millis = core.max_start_wait_millis()

    def __repr__(self) -> str:
        """Show the timings."""
        return (
            f"LeasePolicy(lease_millis={self.lease_millis}, "
            f"renew_interval_millis={self.renew_interval_millis}, "
            f"safety_margin_millis={self.safety_margin_millis}, max_worker={self.max_worker})"
        )


@dataclass(frozen=True)
class WorkerLease:
    """One row of the ``worker_lease`` table, as the rules read it."""

    worker_id: int
    fencing_token: int
    #: When the holder's lease ends (for a released row: when released), Unix ms.
    lease_deadline_millis: int
    #: No ID of this worker id was issued with a time after this (Unix ms).
    high_water_millis: int
    #: Whether a holder has the row.
    held: bool

    @classmethod
    def _of(cls, row: ffi.WorkerLease) -> WorkerLease:
        return cls(
            row.worker_id,
            row.fencing_token,
            row.lease_deadline_millis,
            row.high_water_millis,
            row.held,
        )

    def _to_ffi(self) -> ffi.WorkerLease:
        return ffi.WorkerLease(
            worker_id=check_uint("worker_id", self.worker_id),
            fencing_token=check_uint("fencing_token", self.fencing_token),
            lease_deadline_millis=check_uint("lease_deadline_millis", self.lease_deadline_millis),
            high_water_millis=check_uint("high_water_millis", self.high_water_millis),
            held=bool(self.held),
        )


@dataclass(frozen=True)
class Acquisition:
    """A decided acquisition: the row to write by compare-and-set, and where
    the new holder's IDs start.
    """  # noqa: D205

    #: The row to write (``lease_take``).
    lease: WorkerLease
    #: The fencing token of the row as found: the compare-and-set guard.
    expected_token: int
    #: When the acquisition was decided (Unix ms).
    acquired_millis: int
    #: Build the generator with ``starting_after_unix_millis=start_after_millis``.
    start_after_millis: int
    #: Issue nothing before the clock reaches this (Unix ms).
    ready_at_millis: int

    def _to_ffi(self) -> ffi.Acquisition:
        return ffi.Acquisition(
            lease=self.lease._to_ffi(),
            expected_token=check_uint("expected_token", self.expected_token),
            acquired_millis=check_uint("acquired_millis", self.acquired_millis),
            start_after_millis=check_uint("start_after_millis", self.start_after_millis),
            ready_at_millis=check_uint("ready_at_millis", self.ready_at_millis),
        )


def _policy(policy: LeasePolicy) -> ffi.LeasePolicy:
    if not isinstance(policy, LeasePolicy):
        raise TypeError(f"policy must be a LeasePolicy, got {type(policy).__name__}")
    return policy._core


def acquire_lease(row: WorkerLease, now_millis: int, policy: LeasePolicy) -> Acquisition:
    """Decide the acquisition of ``row``, the row ``lease_find`` returned at ``now_millis``."""
    if not isinstance(row, WorkerLease):
        raise TypeError(f"row must be a WorkerLease, got {type(row).__name__}")
    made = call(
        ffi.lease_acquire, row._to_ffi(), check_uint("now_millis", now_millis), _policy(policy)
    )
    return Acquisition(
        WorkerLease._of(made.lease),
        made.expected_token,
        made.acquired_millis,
        made.start_after_millis,
        made.ready_at_millis,
    )


def lease_none_found(present: int, free: int, policy: LeasePolicy) -> Literal["seed", "retry"]:
    """What follows a ``lease_find`` that found nothing, from ``lease_count``:
    ``"seed"`` (rows are missing) or ``"retry"`` (free rows were locked);
    :class:`~mintid.LeaseNoWorkerFreeError` when every worker id is held.
    """  # noqa: D205
    made = call(
        ffi.lease_none_found,
        check_uint("present", present),
        check_uint("free", free),
        _policy(policy),
    )
    return "seed" if made == ffi.LeaseNoneFound.SEED else "retry"


@dataclass(frozen=True)
class LeaseRenewal:
    """A renewal to write with ``lease_renew``."""

    worker_id: int
    fencing_token: int
    lease_deadline_millis: int
    high_water_millis: int
    now_millis: int

    def _to_ffi(self) -> ffi.Renewal:
        return ffi.Renewal(
            worker_id=check_uint("worker_id", self.worker_id),
            fencing_token=check_uint("fencing_token", self.fencing_token),
            lease_deadline_millis=check_uint("lease_deadline_millis", self.lease_deadline_millis),
            high_water_millis=check_uint("high_water_millis", self.high_water_millis),
            now_millis=check_uint("now_millis", self.now_millis),
        )


@dataclass(frozen=True)
class LeaseRelease:
    """A release to write with ``lease_release`` on clean shutdown."""

    worker_id: int
    fencing_token: int
    high_water_millis: int
    now_millis: int


class LeaseGuard:
    """A held lease: :meth:`admit` every ID before handing it out, renew on
    time (:meth:`renewal`, then :meth:`renewed`), :meth:`release` on shutdown.
    Thread-safe.
    """  # noqa: D205

    __slots__ = ("_core",)

    def __init__(self, acquisition: Acquisition, policy: LeasePolicy) -> None:
        """The guard of an acquisition the host has written (``lease_take`` changed one row)."""
        if not isinstance(acquisition, Acquisition):
            raise TypeError(f"acquisition must be an Acquisition, got {type(acquisition)}")
        self._core = call(ffi.LeaseGuard, acquisition._to_ffi(), _policy(policy))

    @classmethod
    def _of(cls, core: ffi.LeaseGuard) -> LeaseGuard:
        """The guard a core lease driver made."""
        guard = cls.__new__(cls)
        guard._core = core
        return guard

    @property
    def worker_id(self) -> int:
        """The leased worker id: the generator's worker."""
        return self._core.worker_id()

    @property
    def fencing_token(self) -> int:
        """The holder's fencing token."""
        return self._core.fencing_token()

    @property
    def start_after_millis(self) -> int:
        """IDs are issued only after this Unix ms."""
        return self._core.start_after_millis()

    @property
    def ready_at_millis(self) -> int:
        """Nothing is issued before the clock reaches this Unix ms."""
        return self._core.ready_at_millis()

    @property
    def lease_deadline_millis(self) -> int:
        """The deadline of the last renewal known written."""
        return self._core.lease_deadline_millis()

    @property
    def stop_at_millis(self) -> int:
        """The deadline minus the safety margin: nothing is admitted from it on."""
        return self._core.stop_at_millis()

    @property
    def next_renewal_at_millis(self) -> int:
        """When the next renewal is due."""
        return self._core.next_renewal_at_millis()

    @property
    def is_live(self) -> bool:
        """Whether the lease is neither lost nor released."""
        return self._core.is_live()

    def renew_due(self, now_millis: int) -> bool:
        """Whether a renewal is due at ``now_millis``."""
        return self._core.renew_due(check_uint("now_millis", now_millis))

    def check(self, now_millis: int) -> None:
        """Raise unless the holder may issue at ``now_millis`` (a cheap early refusal)."""
        call(self._core.check, check_uint("now_millis", now_millis))

    def admit(self, snowflake_id: int) -> None:
        """Raise unless ``snowflake_id`` may be handed out; a refused ID must be dropped."""
        call(self._core.admit, check_uint("snowflake_id", snowflake_id))

    def admit_all(self, ids: Iterable[int]) -> None:
        """:meth:`admit` every ID of a batch; the first refusal raises."""
        call(self._core.admit_all, [check_uint("snowflake_id", i) for i in ids])

    def renewal(self, now_millis: int, high_water_millis: int) -> LeaseRenewal:
        """The renewal to write at ``now_millis``, storing ``high_water_millis``."""
        made = call(
            self._core.renewal,
            check_uint("now_millis", now_millis),
            check_uint("high_water_millis", high_water_millis),
        )
        return LeaseRenewal(
            made.worker_id,
            made.fencing_token,
            made.lease_deadline_millis,
            made.high_water_millis,
            made.now_millis,
        )

    def renewed(self, renewal: LeaseRenewal, rows: int) -> None:
        """Report how many rows ``lease_renew`` changed; raises if the lease is lost."""
        if not isinstance(renewal, LeaseRenewal):
            raise TypeError(f"renewal must be a LeaseRenewal, got {type(renewal).__name__}")
        call(self._core.renewed, renewal._to_ffi(), check_uint("rows", rows))

    def renewal_failed(self, now_millis: int) -> None:
        """Report a renewal attempt that failed (storage unreachable)."""
        call(self._core.renewal_failed, check_uint("now_millis", now_millis))

    def release(self, now_millis: int, high_water_millis: int) -> LeaseRelease:
        """The release to write on clean shutdown; nothing is admitted after."""
        made = call(
            self._core.release,
            check_uint("now_millis", now_millis),
            check_uint("high_water_millis", high_water_millis),
        )
        return LeaseRelease(
            made.worker_id, made.fencing_token, made.high_water_millis, made.now_millis
        )
