"""The errors the storage adapters add to the core's (codes ``store.*``)."""

from __future__ import annotations

from typing import ClassVar

from mintid._record import Problem
from mintid.errors import MintidError

__all__ = ["ResponseTooLargeError", "StaleSnapshotError", "StoreError", "StoreUnavailableError"]


class StoreError(MintidError, concern="store"):
    """An error of a storage adapter."""


class StoreUnavailableError(StoreError, code="store.unavailable"):
    """The database cannot be reached or the connection broke (the driver's
    exception is ``__cause__``); nothing was run and nothing half-written.
    """  # noqa: D205

    #: The HTTP problem to answer with (503).
    problem: ClassVar[Problem] = Problem.STORAGE_UNAVAILABLE


class ResponseTooLargeError(StoreError, code="store.response_too_large"):
    """The operation's response is above the 1 MiB limit: it ran, its response
    is not stored, and its key replays this error.
    """  # noqa: D205


class StaleSnapshotError(StoreError, code="store.stale_snapshot"):
    """A claim neither inserted its record nor found the one in the way, round
    after round: the caller's transaction reads an old snapshot (MySQL or
    MariaDB ``REPEATABLE READ`` after an earlier read of the table). Nothing
    was run; claim before reading, or use ``READ COMMITTED``.
    """  # noqa: D205
