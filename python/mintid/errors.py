"""Every error mintid raises: one base class, a class per concern, one per kind.

Each error carries the core's stable dotted ``code`` (the code the shared
test vectors name, identical in every language) and the core's one-line
message::

    try:
        mintid.Snowflake(worker=5000)
    except mintid.SnowflakeWorkerOutOfRangeError as error:
        print(error.code)  # snowflake.worker_out_of_range

Catch :class:`MintidError` for everything, a concern class such as
:class:`SnowflakeError` for one module, or a leaf class for one kind.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "ArgumentBatchTooLargeError",
    "ArgumentByteLengthError",
    "ArgumentError",
    "ArgumentOutOfRangeError",
    "FingerprintDuplicateMemberError",
    "FingerprintError",
    "FingerprintInvalidJsonError",
    "FingerprintInvalidPointerError",
    "FingerprintInvalidTextError",
    "FingerprintInvalidUtf8Error",
    "FingerprintLoneSurrogateError",
    "FingerprintNumberOutOfRangeError",
    "FingerprintStringValueError",
    "FingerprintTooDeepError",
    "HttpBadStoredResponseError",
    "HttpError",
    "HttpInvalidHeaderError",
    "HttpInvalidMethodError",
    "HttpInvalidStatusError",
    "HttpMalformedBodyError",
    "IdempotencyKeyError",
    "InternalError",
    "KeyEmptyError",
    "KeyInvalidCharacterError",
    "KeyInvalidHeaderError",
    "KeyInvalidTextError",
    "KeyTooLongError",
    "LeaseClockBehindError",
    "LeaseError",
    "LeaseExpiredError",
    "LeaseForeignIdError",
    "LeaseHighWaterAheadError",
    "LeaseInvalidPolicyError",
    "LeaseLostError",
    "LeaseNoWorkerFreeError",
    "LeaseNotReadyError",
    "LeaseReleasedError",
    "LeaseStillHeldError",
    "LeaseTimeOverflowError",
    "LeaseTokenExhaustedError",
    "LeaseWorkerOutOfRangeError",
    "MintidError",
    "OutboxClaimLostError",
    "OutboxError",
    "OutboxInvalidMessageError",
    "OutboxInvalidPolicyError",
    "OutboxTimeOverflowError",
    "OutboxUnexpectedRowsError",
    "OutboxUnknownStatusError",
    "RecordClaimConflictError",
    "RecordClaimExpiredError",
    "RecordError",
    "RecordInvalidPolicyError",
    "RecordNotPendingError",
    "RecordStaleTokenError",
    "RecordTimeOverflowError",
    "RecordTokenExhaustedError",
    "RecordUnknownStatusError",
    "RequestIdBadTagError",
    "RequestIdCurrentKeyError",
    "RequestIdDuplicateKeyIdError",
    "RequestIdError",
    "RequestIdExpiryOutOfRangeError",
    "RequestIdGrantExpiredError",
    "RequestIdInFutureError",
    "RequestIdInvalidScopeError",
    "RequestIdMalformedError",
    "RequestIdMalformedGrantError",
    "RequestIdTooOldError",
    "RequestIdUnknownKeyError",
    "RequestIdUnsupportedVersionError",
    "RequestIdWeakSecretError",
    "SegmentError",
    "SegmentInvalidPolicyError",
    "SegmentInvalidRowError",
    "SegmentInvalidTagError",
    "SegmentNoFetchError",
    "SegmentWentBackError",
    "SnowflakeClockRolledBackError",
    "SnowflakeEpochInFutureError",
    "SnowflakeError",
    "SnowflakeForkedError",
    "SnowflakeIdOutOfRangeError",
    "SnowflakeInvalidLayoutError",
    "SnowflakeInvalidTextError",
    "SnowflakeSequenceOutOfRangeError",
    "SnowflakeTimeExhaustedError",
    "SnowflakeTimeOutOfRangeError",
    "SnowflakeUnknownPresetError",
    "SnowflakeWaitExceededError",
    "SnowflakeWorkerOutOfRangeError",
    "Uuid7BufferLengthError",
    "Uuid7ClockRollbackError",
    "Uuid7Error",
    "Uuid7InvalidTextError",
    "Uuid7RandAOutOfRangeError",
    "Uuid7RandBOutOfRangeError",
    "Uuid7TimestampOutOfRangeError",
    "Uuid7TimestampOverflowError",
    "Uuid7WrongVariantError",
    "Uuid7WrongVersionError",
    "UuidBase32OverflowError",
    "UuidError",
    "UuidInvalidCharacterError",
    "UuidInvalidLengthError",
    "error_class",
]

_BY_CODE: dict[str, type[MintidError]] = {}
_BY_CONCERN: dict[str, type[MintidError]] = {}


class MintidError(Exception):
    """Base class of every error mintid raises.

    ``code`` is the stable dotted code (``"snowflake.worker_out_of_range"``),
    ``message`` the one-line explanation, which names the offending value.
    """

    #: The code of a leaf class, or the concern prefix of a concern class.
    CODE: ClassVar[str] = ""

    code: str
    message: str
    #: The part of the input at fault (``"scope"`` of a key), when the core says.
    part: str | None
    #: The zero-based byte offset of the problem in the input, when the core says.
    position: int | None
    #: The stable name of the HTTP problem (``"grant_expired"``) the core maps
    #: this error to, when it names one (see :class:`mintid.Problem`).
    problem_name: str | None

    def __init_subclass__(cls, *, code: str = "", concern: str = "", **kwargs: Any) -> None:
        """Register a leaf class under its ``code`` or a concern class under its prefix."""
        super().__init_subclass__(**kwargs)
        if code:
            cls.CODE = code
            _BY_CODE[code] = cls
        if concern:
            cls.CODE = concern
            _BY_CONCERN[concern] = cls

    def __init__(
        self,
        message: str,
        code: str | None = None,
        *,
        part: str | None = None,
        position: int | None = None,
        problem_name: str | None = None,
    ) -> None:
        """Create the error; ``code`` defaults to the class's own code."""
        super().__init__(message)
        self.message = message
        self.code = code if code is not None else type(self).CODE
        self.part = part
        self.position = position
        self.problem_name = problem_name

    def __repr__(self) -> str:
        """Show class, code and message."""
        return f"{type(self).__name__}({self.message!r}, code={self.code!r})"


def error_class(code: str) -> type[MintidError]:
    """The class raised for ``code``: its leaf class, else its concern's class.

    A code this version does not know (from a newer core) still maps to its
    concern class, or to :class:`MintidError` itself.
    """
    known = _BY_CODE.get(code)
    if known is not None:
        return known
    return _BY_CONCERN.get(code.partition(".")[0], MintidError)


class InternalError(MintidError, code="internal.panic"):
    """The native library failed unexpectedly; please report it."""


class ArgumentError(MintidError, concern="argument"):
    """A value no core type can hold (``argument.*``)."""


class ArgumentOutOfRangeError(ArgumentError, code="argument.out_of_range"):
    """An integer outside the range of its field (for example a negative count)."""


class ArgumentByteLengthError(ArgumentError, code="argument.byte_length"):
    """A byte string of the wrong length."""


class ArgumentBatchTooLargeError(ArgumentError, code="argument.batch_too_large"):
    """A bulk request for more IDs than one call may make."""


class SnowflakeError(MintidError, concern="snowflake"):
    """Snowflake layouts, IDs and generators (``snowflake.*``)."""


class SnowflakeInvalidLayoutError(SnowflakeError, code="snowflake.invalid_layout"):
    """The bit counts, tick or epoch do not make a usable layout."""


class SnowflakeUnknownPresetError(SnowflakeError, code="snowflake.unknown_preset"):
    """No preset layout has the given name."""


class SnowflakeWorkerOutOfRangeError(SnowflakeError, code="snowflake.worker_out_of_range"):
    """A worker (or datacenter) id does not fit its field."""


class SnowflakeSequenceOutOfRangeError(SnowflakeError, code="snowflake.sequence_out_of_range"):
    """A sequence number does not fit its field."""


class SnowflakeTimeOutOfRangeError(SnowflakeError, code="snowflake.time_out_of_range"):
    """A time or tick lies before the epoch or past the end of the layout."""


class SnowflakeIdOutOfRangeError(SnowflakeError, code="snowflake.id_out_of_range"):
    """An ID has the sign bit set or bits the layout does not have."""


class SnowflakeInvalidTextError(SnowflakeError, code="snowflake.invalid_text"):
    """The text of an ID is neither decimal nor 13 Crockford base32 digits."""


class SnowflakeEpochInFutureError(SnowflakeError, code="snowflake.epoch_in_future"):
    """The clock reads a time before the layout's epoch."""


class SnowflakeClockRolledBackError(SnowflakeError, code="snowflake.clock_rolled_back"):
    """The clock went back further than the rollback policy tolerates."""


class SnowflakeTimeExhaustedError(SnowflakeError, code="snowflake.time_exhausted"):
    """The layout's time field has run out."""


class SnowflakeWaitExceededError(SnowflakeError, code="snowflake.wait_exceeded"):
    """The generator waited as long as it may for the clock."""


class SnowflakeForkedError(SnowflakeError, code="snowflake.forked"):
    """A generator inherited across ``fork()`` needs its own worker id.

    Raised by the Python package (not the core): the parent process still
    issues IDs with the inherited worker id, so the child must call
    :meth:`mintid.Snowflake.set_worker` with another one first.
    """


class UuidError(MintidError, concern="uuid"):
    """UUID text of any version (``uuid.*``)."""


class UuidInvalidLengthError(UuidError, code="uuid.invalid_length"):
    """The text is not 36, 32, 45 or 26 characters long."""


class UuidInvalidCharacterError(UuidError, code="uuid.invalid_character"):
    """A character that does not belong where it is."""


class UuidBase32OverflowError(UuidError, code="uuid.base32_overflow"):
    """A base32 text whose value needs more than 128 bits."""


class Uuid7Error(MintidError, concern="uuid7"):
    """UUIDv7 values and generators (``uuid7.*``)."""


class Uuid7InvalidTextError(Uuid7Error, code="uuid7.invalid_text"):
    """The text is not a UUID in any of the four forms."""


class Uuid7WrongVersionError(Uuid7Error, code="uuid7.wrong_version"):
    """A UUID of another version than 7."""


class Uuid7WrongVariantError(Uuid7Error, code="uuid7.wrong_variant"):
    """A version 7 field without the RFC 9562 variant."""


class Uuid7TimestampOutOfRangeError(Uuid7Error, code="uuid7.timestamp_out_of_range"):
    """A Unix millisecond timestamp above 2^48 - 1."""


class Uuid7RandAOutOfRangeError(Uuid7Error, code="uuid7.rand_a_out_of_range"):
    """A ``rand_a`` above 2^12 - 1."""


class Uuid7RandBOutOfRangeError(Uuid7Error, code="uuid7.rand_b_out_of_range"):
    """A ``rand_b`` above 2^62 - 1."""


class Uuid7ClockRollbackError(Uuid7Error, code="uuid7.clock_rollback"):
    """The clock went back further than the rollback policy tolerates."""


class Uuid7TimestampOverflowError(Uuid7Error, code="uuid7.timestamp_overflow"):
    """The 48-bit timestamp is used up."""


class Uuid7BufferLengthError(Uuid7Error, code="uuid7.buffer_length"):
    """A byte buffer whose length is not a multiple of 16."""


class IdempotencyKeyError(MintidError, concern="key"):
    """Idempotency keys (``key.*``); ``part`` and ``position`` say where."""


class KeyEmptyError(IdempotencyKeyError, code="key.empty"):
    """A part of the key (or the header value) is empty."""


class KeyTooLongError(IdempotencyKeyError, code="key.too_long"):
    """A part of the key is longer than its column allows."""


class KeyInvalidCharacterError(IdempotencyKeyError, code="key.invalid_character"):
    """A character a part of the key may not hold."""


class KeyInvalidHeaderError(IdempotencyKeyError, code="key.invalid_header"):
    """An ``Idempotency-Key`` header value that is not a valid string."""


class KeyInvalidTextError(IdempotencyKeyError, code="key.invalid_text"):
    """A text that is not ``kind:scope:id``."""


class FingerprintError(MintidError, concern="fingerprint"):
    """Payload fingerprints (``fingerprint.*``); ``position`` says where in the JSON."""


class FingerprintInvalidUtf8Error(FingerprintError, code="fingerprint.invalid_utf8"):
    """The payload is not UTF-8."""


class FingerprintInvalidJsonError(FingerprintError, code="fingerprint.invalid_json"):
    """The payload is not JSON (or has a value JSON cannot hold, such as NaN)."""


class FingerprintDuplicateMemberError(FingerprintError, code="fingerprint.duplicate_member"):
    """An object names a member twice."""


class FingerprintLoneSurrogateError(FingerprintError, code="fingerprint.lone_surrogate"):
    """A string escapes half of a UTF-16 surrogate pair."""


class FingerprintNumberOutOfRangeError(FingerprintError, code="fingerprint.number_out_of_range"):
    """A number beyond what every language reads exactly."""


class FingerprintTooDeepError(FingerprintError, code="fingerprint.too_deep"):
    """The payload nests deeper than the core allows."""


class FingerprintInvalidPointerError(FingerprintError, code="fingerprint.invalid_pointer"):
    """A field selection that is not a JSON Pointer."""


class FingerprintInvalidTextError(FingerprintError, code="fingerprint.invalid_text"):
    """A text that is not ``sha256:`` and 43 base64url characters."""


class FingerprintStringValueError(FingerprintError, code="fingerprint.string_value"):
    """A value to fingerprint that is one string (JSON text goes to ``fingerprint_json``)."""


class RequestIdError(MintidError, concern="request_id"):
    """Request IDs, grants and key rings (``request_id.*``)."""


class RequestIdMalformedError(RequestIdError, code="request_id.malformed"):
    """The text is not a request ID of any known form."""


class RequestIdUnsupportedVersionError(RequestIdError, code="request_id.unsupported_version"):
    """A signed request ID of a format version this core does not read."""


class RequestIdUnknownKeyError(RequestIdError, code="request_id.unknown_key"):
    """The key id is not in the key ring."""


class RequestIdBadTagError(RequestIdError, code="request_id.bad_tag"):
    """The tag does not verify: forged, or minted for another scope."""


class RequestIdGrantExpiredError(RequestIdError, code="request_id.grant_expired"):
    """The grant the ID was minted from has expired."""


class RequestIdTooOldError(RequestIdError, code="request_id.too_old"):
    """The ID is older than the freshness bound allows."""


class RequestIdInFutureError(RequestIdError, code="request_id.in_future"):
    """The ID is further ahead of the clock than the skew bound allows."""


class RequestIdInvalidScopeError(RequestIdError, code="request_id.invalid_scope"):
    """A scope that is empty or longer than 255 bytes."""


class RequestIdMalformedGrantError(RequestIdError, code="request_id.malformed_grant"):
    """The text is not a grant."""


class RequestIdWeakSecretError(RequestIdError, code="request_id.weak_secret"):
    """A server secret shorter than 32 bytes."""


class RequestIdDuplicateKeyIdError(RequestIdError, code="request_id.duplicate_key_id"):
    """A key id the ring already holds."""


class RequestIdCurrentKeyError(RequestIdError, code="request_id.current_key"):
    """The current key cannot be retired."""


class RequestIdExpiryOutOfRangeError(RequestIdError, code="request_id.expiry_out_of_range"):
    """An expiry at or beyond 2^48 milliseconds."""


class RecordError(MintidError, concern="record"):
    """The idempotency record state machine (``record.*``)."""


class RecordStaleTokenError(RecordError, code="record.stale_token"):
    """A fence older than the record's latest claim: the key was reclaimed since."""


class RecordNotPendingError(RecordError, code="record.not_pending"):
    """The claim already ended: the record is no longer pending."""


class RecordClaimConflictError(RecordError, code="record.claim_conflict"):
    """The record changed since it was loaded: load it and decide again."""


class RecordClaimExpiredError(RecordError, code="record.claim_expired"):
    """The claim's own lease ended before it was written."""


class RecordTokenExhaustedError(RecordError, code="record.token_exhausted"):
    """The fencing token cannot be bumped further."""


class RecordTimeOverflowError(RecordError, code="record.time_overflow"):
    """A time plus the lease or retention passes 2^64 milliseconds."""


class RecordInvalidPolicyError(RecordError, code="record.invalid_policy"):
    """A record policy whose values do not fit together."""


class RecordUnknownStatusError(RecordError, code="record.unknown_status"):
    """A stored status text the core does not know."""


class LeaseError(MintidError, concern="lease"):
    """Worker-id leases (``lease.*``)."""


class LeaseInvalidPolicyError(LeaseError, code="lease.invalid_policy"):
    """A lease policy whose values do not fit together."""


class LeaseNoWorkerFreeError(LeaseError, code="lease.no_worker_free"):
    """Every worker id is held by a live lease."""


class LeaseWorkerOutOfRangeError(LeaseError, code="lease.worker_out_of_range"):
    """A worker id above the policy's range."""


class LeaseStillHeldError(LeaseError, code="lease.still_held"):
    """The lease of the row is still running."""


class LeaseHighWaterAheadError(LeaseError, code="lease.high_water_ahead"):
    """The new holder would wait too long before it is ready."""


class LeaseTokenExhaustedError(LeaseError, code="lease.token_exhausted"):
    """The fencing token cannot be bumped further."""


class LeaseTimeOverflowError(LeaseError, code="lease.time_overflow"):
    """A time plus a duration passes 2^64 milliseconds."""


class LeaseNotReadyError(LeaseError, code="lease.not_ready"):
    """Before the holder's ready time."""


class LeaseClockBehindError(LeaseError, code="lease.clock_behind"):
    """The clock reads earlier than the last renewal."""


class LeaseExpiredError(LeaseError, code="lease.expired"):
    """At or past the stop point: renew first."""


class LeaseLostError(LeaseError, code="lease.lost"):
    """The lease was lost: stop issuing."""


class LeaseReleasedError(LeaseError, code="lease.released"):
    """The lease was released."""


class LeaseForeignIdError(LeaseError, code="lease.foreign_id"):
    """An ID of another worker id, or from before the start point."""


class SegmentError(MintidError, concern="segment"):
    """Segment allocators (``segment.*``)."""


class SegmentInvalidPolicyError(SegmentError, code="segment.invalid_policy"):
    """A segment policy whose values do not fit together."""


class SegmentInvalidRowError(SegmentError, code="segment.invalid_row"):
    """A fetched row that is not a segment."""


class SegmentWentBackError(SegmentError, code="segment.went_back"):
    """A fetched segment below the previous one."""


class SegmentNoFetchError(SegmentError, code="segment.no_fetch"):
    """A fetch reported that was not asked for."""


class SegmentInvalidTagError(SegmentError, code="segment.invalid_tag"):
    """A segment tag that is not 1 to 64 bytes of ASCII."""


class OutboxError(MintidError, concern="outbox"):
    """The outbox relay (``outbox.*``)."""


class OutboxInvalidPolicyError(OutboxError, code="outbox.invalid_policy"):
    """A relay policy whose values do not fit together."""


class OutboxInvalidMessageError(OutboxError, code="outbox.invalid_message"):
    """A message that may not be enqueued."""


class OutboxUnknownStatusError(OutboxError, code="outbox.unknown_status"):
    """A stored status text the core does not know."""


class OutboxClaimLostError(OutboxError, code="outbox.claim_lost"):
    """The claim ended and another relay took the message."""


class OutboxUnexpectedRowsError(OutboxError, code="outbox.unexpected_rows"):
    """An affected-row count the rules do not allow."""


class OutboxTimeOverflowError(OutboxError, code="outbox.time_overflow"):
    """A time plus a duration passes 2^64 milliseconds."""


class HttpError(MintidError, concern="http"):
    """The HTTP integrations' shared rules (``http.*``)."""


class HttpInvalidMethodError(HttpError, code="http.invalid_method"):
    """A method that cannot name a default key kind."""


class HttpInvalidStatusError(HttpError, code="http.invalid_status"):
    """A status outside 100-599, or without a plain-status problem."""


class HttpInvalidHeaderError(HttpError, code="http.invalid_header"):
    """A header to store whose name is no token or whose value holds CR, LF or NUL."""


class HttpBadStoredResponseError(HttpError, code="http.bad_stored_response"):
    """Stored bytes that are not a ``mintid-http/1`` envelope; ``position`` says where."""


class HttpMalformedBodyError(HttpError, code="http.malformed_body"):
    """A JSON content type with a body that is not JSON (``problem_name``
    ``malformed_body``, 400); ``position`` says where it stops being JSON.
    """  # noqa: D205
