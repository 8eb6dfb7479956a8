"""mintid: unique IDs and exactly-once request rules, on one Rust core.

IDs and keys:

* :class:`Snowflake` makes 64-bit time-ordered IDs for one worker, in a
  :class:`SnowflakeLayout` (presets or your own widths, epoch and tick).
* :func:`uuid7` and :func:`uuid7_str` make RFC 9562 UUIDv7s, monotonic
  within a millisecond; :class:`Uuid7Generator` is a generator of your own.
* :class:`IdempotencyKey` names one operation for one caller and attempt;
  :func:`fingerprint` hashes a payload identically in every language.
* :class:`RequestId` is minted by a client from a :class:`Grant` and
  verified by the server's :class:`KeyRing`.
* :class:`LeaseGuard` keeps a leased Snowflake worker id safe;
  :class:`SegmentAllocator` hands out IDs from database segments;
  :class:`RelayPolicy` drives an outbox relay.
* :func:`decide` runs the idempotency record state machine over a stored
  :class:`Record`; :class:`Problem` maps refusals to HTTP.

Every rule lives in the Rust core shared with the Kotlin and JavaScript
packages; this package converts types and hands IDs out fast. Errors are
:class:`MintidError` subclasses carrying the core's stable ``code``.
"""

import importlib.metadata

from mintid._fingerprint import (
    Fingerprint,
    canonical_json,
    fingerprint,
    fingerprint_bytes,
    fingerprint_json,
)
from mintid._key import IdempotencyKey, key_id_from_fields, parse_idempotency_key_header
from mintid._lease import (
    Acquisition,
    LeaseGuard,
    LeasePolicy,
    LeaseRelease,
    LeaseRenewal,
    WorkerLease,
    acquire_lease,
    lease_none_found,
)
from mintid._native import ffi as _ffi
from mintid._outbox import (
    OUTBOX_ATTEMPTS_EXHAUSTED,
    BatchClaim,
    OutboxStatus,
    RelayPolicy,
    check_outbox_marked,
    check_outbox_message,
    outbox_enqueued,
)
from mintid._policy import RollbackPolicy, SequencePolicy
from mintid._record import (
    PROBLEM_CONTENT_TYPE,
    REPLAYED_HEADER,
    REPLAYED_VALUE,
    RETRY_AFTER_HEADER,
    Claim,
    Decision,
    Execute,
    Expected,
    Failure,
    Fence,
    FingerprintMismatch,
    Incoming,
    InProgress,
    KeyTooOld,
    Outcome,
    Problem,
    Record,
    RecordPolicy,
    RecordStatus,
    Replay,
    Wait,
    decide,
    retry_after_secs,
)
from mintid._request_id import Grant, KeyRing, RequestId
from mintid._segment import SegmentAllocator, SegmentPolicy
from mintid._snowflake import (
    Snowflake,
    SnowflakeLayout,
    SnowflakeParts,
    snowflake_from_base32,
    snowflake_from_decimal,
    snowflake_to_base32,
)
from mintid._uuid import (
    TextForm,
    Uuid7,
    Uuid7Generator,
    UuidInfo,
    format_uuid,
    inspect_uuid,
    parse_uuid,
    uuid7,
    uuid7_str,
    uuid_v8,
)
from mintid.errors import *  # noqa: F403
from mintid.errors import __all__ as _error_names

__version__ = importlib.metadata.version("mintid")


def core_version() -> str:
    """The version of the Rust core (crate ``mintid``) inside this package's native library."""
    return str(_ffi.core_version())


__all__ = [
    "Acquisition",
    "LeaseGuard",
    "LeasePolicy",
    "LeaseRelease",
    "LeaseRenewal",
    "WorkerLease",
    "acquire_lease",
    "lease_none_found",
    "OUTBOX_ATTEMPTS_EXHAUSTED",
    "BatchClaim",
    "OutboxStatus",
    "RelayPolicy",
    "check_outbox_marked",
    "check_outbox_message",
    "outbox_enqueued",
    "SegmentAllocator",
    "SegmentPolicy",
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
    "Fingerprint",
    "Grant",
    "KeyRing",
    "RequestId",
    "IdempotencyKey",
    "canonical_json",
    "fingerprint",
    "fingerprint_bytes",
    "fingerprint_json",
    "key_id_from_fields",
    "parse_idempotency_key_header",
    "RollbackPolicy",
    "SequencePolicy",
    "Snowflake",
    "SnowflakeLayout",
    "SnowflakeParts",
    "TextForm",
    "Uuid7",
    "Uuid7Generator",
    "UuidInfo",
    "__version__",
    "core_version",
    "format_uuid",
    "inspect_uuid",
    "parse_uuid",
    "snowflake_from_base32",
    "snowflake_from_decimal",
    "snowflake_to_base32",
    "uuid7",
    "uuid7_str",
    "uuid_v8",
    *_error_names,
]
