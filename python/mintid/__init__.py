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
* :class:`OpenTelemetryMetrics` records the stores' metrics and spans
  (:mod:`mintid.store`) through OpenTelemetry, under the core's names.

Every rule lives in the Rust core shared with the Kotlin and JavaScript
packages; this package converts types and hands IDs out fast. Errors are
:class:`MintidError` subclasses carrying the core's stable ``code``.
"""

# `import mintid` imports nothing but this file and mintid._lazy: each public name
# comes from its module when first used (PEP 562, see mintid/_lazy.py). Type
# checkers read the imports below instead; tests/test_package.py checks both agree.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from mintid._fingerprint import *  # noqa: F403
    from mintid._key import *  # noqa: F403
    from mintid._lease import *  # noqa: F403
    from mintid._outbox import *  # noqa: F403
    from mintid._policy import *  # noqa: F403
    from mintid._record import *  # noqa: F403
    from mintid._request_id import *  # noqa: F403
    from mintid._segment import *  # noqa: F403
    from mintid._snowflake import *  # noqa: F403
    from mintid._snowflake_generator import *  # noqa: F403
    from mintid._uuid import *  # noqa: F403
    from mintid._uuid_generator import *  # noqa: F403
    from mintid._version import core_version as core_version
    from mintid.errors import *  # noqa: F403
    from mintid.metrics import *  # noqa: F403

    #: The version of this package (the Cargo workspace's, as every mintid package).
    __version__: str
    __all__: list[str]
else:
    from mintid._lazy import attach

    __getattr__, __dir__ = attach(
        __name__,
        {
            "mintid._fingerprint": (
                "Fingerprint canonical_json fingerprint fingerprint_bytes fingerprint_json"
            ),
            "mintid._key": "IdempotencyKey key_id_from_fields parse_idempotency_key_header",
            "mintid._lease": (
                "Acquisition LeaseGuard LeasePolicy LeaseRelease LeaseRenewal "
                "WorkerLease acquire_lease lease_none_found"
            ),
            "mintid._outbox": (
                "OUTBOX_ATTEMPTS_EXHAUSTED BatchClaim OutboxStatus RelayPolicy "
                "check_outbox_marked check_outbox_message outbox_enqueued"
            ),
            "mintid._policy": "RollbackPolicy SequencePolicy",
            "mintid._record": (
                "PROBLEM_CONTENT_TYPE REPLAYED_HEADER REPLAYED_VALUE RETRY_AFTER_HEADER "
                "Claim Decision Execute Expected Failure Fence FingerprintMismatch "
                "Incoming InProgress KeyTooOld Outcome Problem Record RecordPolicy "
                "RecordStatus Replay Wait decide retry_after_secs"
            ),
            "mintid._request_id": "Grant KeyRing RequestId",
            "mintid._segment": "SegmentAllocator SegmentPolicy",
            "mintid._snowflake": (
                "SnowflakeLayout SnowflakeParts snowflake_from_base32 "
                "snowflake_from_decimal snowflake_to_base32"
            ),
            "mintid._snowflake_generator": "Snowflake",
            "mintid._uuid": "TextForm Uuid7 UuidInfo format_uuid inspect_uuid parse_uuid uuid_v8",
            "mintid._uuid_generator": "Uuid7Generator uuid7 uuid7_str",
            "mintid._version": "core_version",
            # Imports no OpenTelemetry package until a recorder is made.
            "mintid.metrics": "OpenTelemetryMetrics",
        },
        star="mintid.errors",
        computed={"__version__": ("mintid._version", "package_version")},
    )
    del attach
