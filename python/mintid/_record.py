"""The idempotency record state machine: what to do with a request, given
the stored record of its key, and how to answer over HTTP.

A storage adapter loads the row of a key, asks :func:`decide`, runs the SQL
the :class:`Decision` names, and feeds results back with
:meth:`Record.complete` and :meth:`Record.fail`. Everything here is pure:
no clock is read and nothing is stored.
"""  # noqa: D205

from __future__ import annotations

import enum
import functools
import json
from dataclasses import astuple, dataclass
from typing import Any, ClassVar, Final

from mintid._fingerprint import Fingerprint
from mintid._native import call, check_uint, ffi

__all__ = [
    "PROBLEM_CONTENT_TYPE",
    "REPLAYED_HEADER",
    "REPLAYED_VALUE",
    "RETRY_AFTER_HEADER",
    "Claim",
    "Decision",
    "Execute",
    "Expected",
    "Failure",
    "Fence",
    "FingerprintMismatch",
    "InProgress",
    "Incoming",
    "KeyTooOld",
    "Outcome",
    "Problem",
    "Record",
    "RecordPolicy",
    "RecordStatus",
    "Replay",
    "Wait",
    "decide",
    "retry_after_secs",
]


class RecordStatus(enum.Enum):
    """Where a record is in its life; ``str()`` gives the stored text."""

    PENDING = ffi.RecordStatus.PENDING
    SUCCEEDED = ffi.RecordStatus.SUCCEEDED
    FAILED = ffi.RecordStatus.FAILED
    FAILED_RETRYABLE = ffi.RecordStatus.FAILED_RETRYABLE

    @classmethod
    def parse(cls, text: str) -> RecordStatus:
        """Read a stored status text (exactly, case-sensitive)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return cls(call(ffi.record_status_parse, text))

    def __str__(self) -> str:
        """The stored text (``pending``, ``succeeded``, ``failed``, ``failed_retryable``)."""
        return call(ffi.record_status_text, self.value)


class Outcome(enum.Enum):
    """Which stored result a replay returns."""

    SUCCEEDED = ffi.Outcome.SUCCEEDED
    FAILED = ffi.Outcome.FAILED

    def __str__(self) -> str:
        """``succeeded`` or ``failed``."""
        return self.name.lower()


class Failure(enum.Enum):
    """How an operation failed, as its holder reports it to :meth:`Record.fail`."""

    #: Worth retrying: the key is released and the next request runs again.
    RETRYABLE = ffi.Failure.RETRYABLE
    #: Final: the error is stored and replayed (when the policy stores errors).
    FINAL = ffi.Failure.FINAL


class Problem(enum.Enum):
    """An HTTP problem of the idempotency rules (RFC 9457 ``problem+json``)."""

    MISSING_KEY = ffi.Problem.MISSING_KEY
    MALFORMED_KEY = ffi.Problem.MALFORMED_KEY
    INVALID_REQUEST_ID = ffi.Problem.INVALID_REQUEST_ID
    GRANT_EXPIRED = ffi.Problem.GRANT_EXPIRED
    IN_PROGRESS = ffi.Problem.IN_PROGRESS
    FINGERPRINT_MISMATCH = ffi.Problem.FINGERPRINT_MISMATCH
    KEY_TOO_OLD = ffi.Problem.KEY_TOO_OLD
    STORAGE_UNAVAILABLE = ffi.Problem.STORAGE_UNAVAILABLE
    MALFORMED_BODY = ffi.Problem.MALFORMED_BODY

    @property
    def _details(self) -> ffi.ProblemDetails:
        return _PROBLEM_DETAILS[self.value]

    @property
    def status(self) -> int:
        """The HTTP status code."""
        return self._details.status

    @property
    def type_uri(self) -> str:
        """The problem's ``type`` URI."""
        return self._details.type_uri

    @property
    def title(self) -> str:
        """The problem's ``title``."""
        return self._details.title

    @property
    def problem_name(self) -> str:
        """The stable name, e.g. ``in_progress``."""
        return self._details.name

    def body(self, detail: str | None = None) -> dict[str, Any]:
        """The ``application/problem+json`` body (the core's, parsed), with a ``detail``."""
        if detail is not None and not isinstance(detail, str):
            raise TypeError(f"detail must be a str, got {type(detail).__name__}")
        body: dict[str, Any] = json.loads(ffi.http_problem_document(self.value, detail))
        return body


_PROBLEM_DETAILS: Final = {details.problem: details for details in call(ffi.record_problems)}
_HTTP: Final = call(ffi.record_http_constants)

#: The content type of problem answers.
PROBLEM_CONTENT_TYPE: Final[str] = _HTTP.problem_content_type
#: The header that marks a replayed answer, and its value.
REPLAYED_HEADER: Final[str] = _HTTP.replayed_header
REPLAYED_VALUE: Final[str] = _HTTP.replayed_value
#: The header carrying a retry delay in seconds.
RETRY_AFTER_HEADER: Final[str] = _HTTP.retry_after_header


def retry_after_secs(millis: int) -> int:
    """The ``Retry-After`` seconds for a delay in milliseconds (rounded up, at least 1)."""
    return call(ffi.record_retry_after_secs, check_uint("millis", millis))


_DEFAULT_POLICY: Final = call(ffi.record_policy_default)


@dataclass(frozen=True)
class RecordPolicy:
    """The rules a host sets for its records; checked on creation.

    The defaults are the core's: a 60 s lease, 24 h retention, errors
    stored, a 1 s retry hint, no waiting (a concurrent duplicate gets HTTP
    409 at once). Invalid values raise :class:`~mintid.RecordInvalidPolicyError`.
    """

    #: How long a claim holds the key before another request may reclaim it (ms).
    lease_millis: int = _DEFAULT_POLICY.lease_millis
    #: How long a record is kept from the key's creation (ms).
    retention_millis: int = _DEFAULT_POLICY.retention_millis
    #: Whether final failures are stored and replayed.
    store_errors: bool = _DEFAULT_POLICY.store_errors
    #: The longest retry delay suggested to a concurrent duplicate (ms).
    retry_after_millis: int = _DEFAULT_POLICY.retry_after_millis
    #: How long a duplicate waits for the first request (ms; 0: not at all).
    max_wait_millis: int = _DEFAULT_POLICY.max_wait_millis
    #: How often a waiting duplicate reloads the record (ms).
    poll_millis: int = _DEFAULT_POLICY.poll_millis

    def __post_init__(self) -> None:
        """Let the core check the values now, not at the first decision."""
        self._checked  # noqa: B018 (makes and caches the checked policy)

    @functools.cached_property
    def _checked(self) -> ffi.CheckedRecordPolicy:
        """The policy as the core checked and holds it: made once, passed to every call."""
        return call(ffi.CheckedRecordPolicy, self._to_ffi())

    def __reduce__(self) -> tuple[type[RecordPolicy], tuple[Any, ...]]:
        """Copies and pickles are made anew from the values: the core's handle is never shared."""
        return (type(self), astuple(self))

    def _to_ffi(self) -> ffi.RecordPolicy:
        return ffi.RecordPolicy(
            lease_millis=check_uint("lease_millis", self.lease_millis),
            retention_millis=check_uint("retention_millis", self.retention_millis),
            store_errors=bool(self.store_errors),
            retry_after_millis=check_uint("retry_after_millis", self.retry_after_millis),
            max_wait_millis=check_uint("max_wait_millis", self.max_wait_millis),
            poll_millis=check_uint("poll_millis", self.poll_millis),
        )


@dataclass(frozen=True)
class Fence:
    """What identifies one claim of a key: its token and the record's creation time."""

    token: int
    created_millis: int

    def _to_ffi(self) -> ffi.Fence:
        return ffi.Fence(
            token=check_uint("token", self.token),
            created_millis=check_uint("created_millis", self.created_millis),
        )


@dataclass(frozen=True)
class Record:
    """The stored state of one idempotency key: one row of the shared schema."""

    status: RecordStatus
    #: The fingerprint of the payload that first used the key.
    fingerprint: Fingerprint
    #: The fencing token of the latest claim.
    token: int
    #: While pending: when the holder's lease ends (Unix ms).
    lease_deadline_millis: int
    #: When the key was first claimed (Unix ms).
    created_millis: int
    #: When the record leaves retention (Unix ms).
    expires_millis: int

    @classmethod
    def _of(cls, record: ffi.Record) -> Record:
        return cls(
            RecordStatus(record.status),
            Fingerprint._of_core(record.fingerprint),
            record.token,
            record.lease_deadline_millis,
            record.created_millis,
            record.expires_millis,
        )

    def _to_ffi(self) -> ffi.Record:
        if not isinstance(self.status, RecordStatus):
            raise TypeError(f"status must be a RecordStatus, got {type(self.status).__name__}")
        if not isinstance(self.fingerprint, Fingerprint):
            raise TypeError(f"fingerprint must be a Fingerprint, got {type(self.fingerprint)}")
        return ffi.Record(
            status=self.status.value,
            fingerprint=self.fingerprint.digest,
            token=check_uint("token", self.token),
            lease_deadline_millis=check_uint("lease_deadline_millis", self.lease_deadline_millis),
            created_millis=check_uint("created_millis", self.created_millis),
            expires_millis=check_uint("expires_millis", self.expires_millis),
        )

    @property
    def fence(self) -> Fence:
        """The fence of the record's latest claim."""
        return Fence(self.token, self.created_millis)

    def complete(self, fence: Fence) -> Record:
        """The record after the holder of ``fence`` completed the operation."""
        return Record._of(call(ffi.record_complete, self._to_ffi(), _fence(fence)))

    def fail(self, fence: Fence, failure: Failure, policy: RecordPolicy) -> Record:
        """The record after the holder of ``fence`` failed the operation."""
        if not isinstance(failure, Failure):
            raise TypeError(f"failure must be a Failure, got {type(failure).__name__}")
        return Record._of(
            call(ffi.record_fail, self._to_ffi(), _fence(fence), failure.value, _policy(policy))
        )

    def is_removable(self, now_millis: int) -> bool:
        """Whether cleanup may delete the record at ``now_millis``."""
        return call(ffi.record_is_removable, self._to_ffi(), check_uint("now_millis", now_millis))


def _fence(fence: Fence) -> ffi.Fence:
    if not isinstance(fence, Fence):
        raise TypeError(f"fence must be a Fence, got {type(fence).__name__}")
    return fence._to_ffi()


def _policy(policy: RecordPolicy) -> ffi.CheckedRecordPolicy:
    if not isinstance(policy, RecordPolicy):
        raise TypeError(f"policy must be a RecordPolicy, got {type(policy).__name__}")
    return policy._checked


def _record(record: Record | None) -> ffi.Record | None:
    if record is None:
        return None
    if not isinstance(record, Record):
        raise TypeError(f"expected a Record or None, got {type(record).__name__}")
    return record._to_ffi()


@dataclass(frozen=True)
class Incoming:
    """What the core needs to know about an incoming request."""

    #: The fingerprint of the request's payload.
    fingerprint: Fingerprint
    #: When the key was created (Unix ms), when known (a verified request ID's time).
    key_created_millis: int | None = None
    #: How long the request has already waited for a concurrent duplicate (ms).
    waited_millis: int = 0

    def _to_ffi(self) -> ffi.Incoming:
        if not isinstance(self.fingerprint, Fingerprint):
            raise TypeError(f"fingerprint must be a Fingerprint, got {type(self.fingerprint)}")
        created = self.key_created_millis
        return ffi.Incoming(
            fingerprint=self.fingerprint.digest,
            key_created_millis=None
            if created is None
            else check_uint("key_created_millis", created),
            waited_millis=check_uint("waited_millis", self.waited_millis),
        )


@dataclass(frozen=True)
class Expected:
    """The state a compare-and-set claim expects to replace."""

    fence: Fence
    status: RecordStatus


@dataclass(frozen=True)
class Claim:
    """A claim on a key: the row to write, and what it must replace (``None``: insert)."""

    record: Record
    expected: Expected | None

    @classmethod
    def _of(cls, claim: ffi.Claim) -> Claim:
        expected = claim.expected
        return cls(
            Record._of(claim.record),
            None
            if expected is None
            else Expected(
                Fence(expected.fence.token, expected.fence.created_millis),
                RecordStatus(expected.status),
            ),
        )

    @property
    def fence(self) -> Fence:
        """The fence the new holder presents when it completes or fails."""
        return self.record.fence

    def apply(self, current: Record | None, now_millis: int) -> Record:
        """Apply the claim at ``now_millis`` to ``current``, as the adapter's SQL does."""
        expected = self.expected
        claim = ffi.Claim(
            record=self.record._to_ffi(),
            expected=None
            if expected is None
            else ffi.Expected(fence=expected.fence._to_ffi(), status=expected.status.value),
        )
        return Record._of(
            call(
                ffi.record_claim_apply,
                claim,
                _record(current),
                check_uint("now_millis", now_millis),
            )
        )


@dataclass(frozen=True)
class Decision:
    """What to do with an incoming request (one of the subclasses)."""

    #: The stable name: ``execute``, ``replay``, ``in_progress``, ``wait``,
    #: ``fingerprint_mismatch`` or ``key_too_old``.
    NAME: ClassVar[str] = ""

    #: For the decisions that refuse the request: the problem to answer with.
    problem: Problem | None


@dataclass(frozen=True)
class Execute(Decision):
    """Write the claim; if it was written, run the operation."""

    NAME: ClassVar[str] = "execute"
    claim: Claim


@dataclass(frozen=True)
class Replay(Decision):
    """Do not run: return the stored result."""

    NAME: ClassVar[str] = "replay"
    outcome: Outcome


@dataclass(frozen=True)
class InProgress(Decision):
    """Another request holds the key: answer 409 with ``Retry-After``."""

    NAME: ClassVar[str] = "in_progress"
    retry_after_millis: int
    retry_after_secs: int


@dataclass(frozen=True)
class Wait(Decision):
    """Another request holds the key: pause ``poll_millis``, reload, decide again."""

    NAME: ClassVar[str] = "wait"
    poll_millis: int


@dataclass(frozen=True)
class FingerprintMismatch(Decision):
    """The key was first used with a different payload: refuse (422)."""

    NAME: ClassVar[str] = "fingerprint_mismatch"


@dataclass(frozen=True)
class KeyTooOld(Decision):
    """The key is older than retention: refuse loudly, never run again (422)."""

    NAME: ClassVar[str] = "key_too_old"


def _decision(made: ffi.Decision) -> Decision:
    problem = None if made.problem is None else Problem(made.problem)
    if made.claim is not None:
        return Execute(problem, Claim._of(made.claim))
    if made.outcome is not None:
        return Replay(problem, Outcome(made.outcome))
    if made.retry_after_millis is not None and made.retry_after_secs is not None:
        return InProgress(problem, made.retry_after_millis, made.retry_after_secs)
    if made.poll_millis is not None:
        return Wait(problem, made.poll_millis)
    if made.name == FingerprintMismatch.NAME:
        return FingerprintMismatch(problem)
    if made.name == KeyTooOld.NAME:
        return KeyTooOld(problem)
    raise AssertionError(f"unknown decision {made.name!r} from the core")


def decide(
    existing: Record | None, incoming: Incoming, now_millis: int, policy: RecordPolicy
) -> Decision:
    """Decide what to do with ``incoming``, given the stored record of its key.

    ``existing`` is ``None`` when storage has no row for the key. The rules
    are the core's (see the spec): a key older than retention is refused,
    no record means execute, a different fingerprint is refused, a finished
    record is replayed, a running one is waited for or reported in progress,
    and an abandoned or retryable one is reclaimed with a new fencing token.
    """
    if not isinstance(incoming, Incoming):
        raise TypeError(f"incoming must be an Incoming, got {type(incoming).__name__}")
    made = call(
        ffi.record_decide,
        _record(existing),
        incoming._to_ffi(),
        check_uint("now_millis", now_millis),
        _policy(policy),
    )
    return _decision(made)
