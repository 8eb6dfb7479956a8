"""The errors of the store drivers (codes ``store.*``, made by the core).

Each class is the Python side of one ``store.*`` code of the core's
``StoreErrorKind``; the core writes the message (never the database driver's
text, which stays on the ``__cause__``: the driver's own exception, for logs).
``part`` names the class of the database error behind it (``connection_lost``,
``serialization``, ``unique_violation``, ``constraint``, ``other``), when one was.
"""

from __future__ import annotations

from typing import Any

from mintid._record import Problem
from mintid.errors import MintidError

__all__ = [
    "LoopBindingError",
    "NotAResponseError",
    "RecordLostError",
    "ResponseNotStorableError",
    "ResponseTooLargeError",
    "StaleSnapshotError",
    "StoreConflictError",
    "StoreError",
    "StoreQueryFailedError",
    "StoreSchemaMissingError",
    "StoreUnavailableError",
    "UnexpectedRowError",
]

_PROBLEMS = {problem.problem_name: problem for problem in Problem}


class StoreError(MintidError, concern="store"):
    """An error of a store driver (``store.*``)."""

    @property
    def problem(self) -> Problem | None:
        """The HTTP problem a request failing this way answers with (the core's)."""
        return None if self.problem_name is None else _PROBLEMS.get(self.problem_name)


class StoreUnavailableError(StoreError, code="store.unavailable"):
    """The database cannot be reached or the connection broke: before the claim
    was written nothing ran; after the operation ran, its record stays pending
    until its lease passes.
    """  # noqa: D205


class ResponseTooLargeError(StoreError, code="store.response_too_large"):
    """The operation's response is over the 1 MiB limit: it ran, the response
    is not stored, and its key replays this error (a stored final failure).
    """  # noqa: D205


class ResponseNotStorableError(StoreError, code="store.response_not_storable"):
    """The response's content type is over 255 bytes or not printable ASCII:
    stored as a final failure, as for :class:`ResponseTooLargeError`.
    """  # noqa: D205


class NotAResponseError(StoreError, code="store.not_a_response"):
    """The operation returned something that is not a
    :class:`~mintid.store.StoredResponse`: the claim was released, nothing stored.
    """  # noqa: D205


class StaleSnapshotError(StoreError, code="store.stale_snapshot"):
    """A claim neither inserted its record nor found the one in the way, round
    after round: the caller's transaction reads an old snapshot (MySQL or
    MariaDB ``REPEATABLE READ`` after an earlier read of the table). Nothing
    was run; claim before reading, or use ``READ COMMITTED``.
    """  # noqa: D205


class StoreConflictError(StoreError, code="store.conflict"):
    """The database kept reporting serialization failures or deadlocks; nothing was run."""


class RecordLostError(StoreError, code="store.record_lost"):
    """A renewal of the record's lease found the key taken over or completed:
    the operation no longer holds its record.
    """  # noqa: D205


class StoreQueryFailedError(StoreError, code="store.query_failed"):
    """A store query failed for another reason (a constraint, a permission, a syntax error)."""


class StoreSchemaMissingError(StoreError, code="store.schema_missing"):
    """A mintid table does not exist: the database was never migrated. Its
    message names the fix: ``db.migrate()`` (``await db.migrate()`` for an
    asyncio database) once at start-up, or your migration tool with the
    files under ``schema/``. An HTTP edge still answers 503 and logs this.
    """  # noqa: D205

    #: What the message adds to the core's: this host's migrate call.
    FIX = (
        ": call db.migrate() once at start-up (await db.migrate() for an asyncio database),"
        " or apply the files under schema/ with your migration tool"
    )

    def __init__(self, message: str, code: str | None = None, **fields: Any) -> None:
        """The core's message, naming this host's migrate call."""
        super().__init__(message + self.FIX, code, **fields)


class UnexpectedRowError(StoreError, code="store.unexpected_row"):
    """A row the core cannot read: the schema is not the one it expects."""


class LoopBindingError(RuntimeError):
    """An async store or database used from an event loop, or a process, other
    than the one it first ran in (its connections belong to that loop and
    process): make one per event loop, and a new one in a forked child.
    """  # noqa: D205
