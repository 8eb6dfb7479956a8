"""Bad input at every entry point raises the right class, with the core's code."""

from __future__ import annotations

import contextlib
import re
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

import mintid
import mintid.errors
import mintid.store
from mintid.testing import ManualClock

CLASSIC = mintid.SnowflakeLayout.CLASSIC
SECRET = bytes(range(32))
NOW = 1_700_000_000_000
RING = mintid.KeyRing(1, SECRET)
GRANT = RING.issue_grant("s", NOW + 60_000)
MINTED = GRANT.mint(mintid.Uuid7.from_fields(NOW, 0, 0).uuid)
FINGERPRINT = mintid.fingerprint({"a": 1})
INCOMING = mintid.Incoming(FINGERPRINT)
PENDING = mintid.Record(mintid.RecordStatus.PENDING, FINGERPRINT, 1, 2000, 1000, 10**8)
EXHAUSTED = mintid.Record(
    mintid.RecordStatus.FAILED_RETRYABLE, FINGERPRINT, 2**64 - 1, 2000, 1000, 10**8
)
CLAIM = mintid.Claim(PENDING, None)
LEASES = mintid.LeasePolicy()
SEGMENTS = mintid.SegmentPolicy(10, 5, 40)
RELAY = mintid.RelayPolicy(10, 1000)


def row(
    worker_id: int = 1,
    fencing_token: int = 0,
    lease_deadline_millis: int = 0,
    high_water_millis: int = 0,
    held: bool = False,
) -> mintid.WorkerLease:
    return mintid.WorkerLease(
        worker_id, fencing_token, lease_deadline_millis, high_water_millis, held
    )


def guard() -> mintid.LeaseGuard:
    """A guard acquired at 1000 ms on the classic layout's worker 1."""
    return mintid.LeaseGuard(mintid.acquire_lease(row(), 1_000, LEASES), LEASES)


def lost_guard() -> mintid.LeaseGuard:
    held = guard()
    with contextlib.suppress(mintid.LeaseLostError):  # reported once, then remembered
        held.renewed(held.renewal(1_100, 1_000), 0)
    return held


def released_guard() -> mintid.LeaseGuard:
    held = guard()
    held.release(1_100, 1_000)
    return held


def fetching() -> mintid.SegmentAllocator:
    allocator = mintid.SegmentAllocator(SEGMENTS)
    allocator.fetch_due(0)
    return allocator


BAD_INPUT: list[tuple[str, Callable[[], object], type[mintid.MintidError]]] = [
    ("lease policy", lambda: mintid.LeasePolicy(lease_millis=1), mintid.LeaseInvalidPolicyError),
    (
        "lease layout",
        lambda: mintid.LeasePolicy(
            mintid.SnowflakeLayout(time_bits=30, worker_bits=17, sequence_bits=16)
        ),
        mintid.LeaseInvalidPolicyError,
    ),
    (
        "lease worker",
        lambda: mintid.acquire_lease(row(worker_id=1024), 0, LEASES),
        mintid.LeaseWorkerOutOfRangeError,
    ),
    (
        "lease held",
        lambda: mintid.acquire_lease(row(held=True, lease_deadline_millis=10), 5, LEASES),
        mintid.LeaseStillHeldError,
    ),
    (
        "lease token",
        lambda: mintid.acquire_lease(row(fencing_token=2**64 - 1), 0, LEASES),
        mintid.LeaseTokenExhaustedError,
    ),
    (
        "lease time",
        lambda: mintid.acquire_lease(row(), 2**64 - 1, LEASES),
        mintid.LeaseTimeOverflowError,
    ),
    (
        "lease start",
        lambda: mintid.acquire_lease(row(high_water_millis=10**9), 0, LEASES),
        mintid.LeaseHighWaterAheadError,
    ),
    (
        "lease none free",
        lambda: mintid.lease_none_found(1024, 0, LEASES),
        mintid.LeaseNoWorkerFreeError,
    ),
    (
        "lease row",
        lambda: mintid.acquire_lease(row(worker_id=-1), 0, LEASES),
        mintid.ArgumentNegativeError,
    ),
    ("guard not ready", lambda: guard().check(0), mintid.LeaseNotReadyError),
    ("guard expired", lambda: guard().check(10**9), mintid.LeaseExpiredError),
    ("guard foreign", lambda: guard().admit(0), mintid.LeaseForeignIdError),
    ("guard id", lambda: guard().admit(2**63), mintid.SnowflakeIdOutOfRangeError),
    ("guard clock", lambda: guard().renewal(0, 0), mintid.LeaseClockBehindError),
    ("guard lost", lambda: lost_guard().check(1_500), mintid.LeaseLostError),
    ("guard released", lambda: released_guard().check(1_500), mintid.LeaseReleasedError),
    ("segment policy", lambda: mintid.SegmentPolicy(10, 0, 40), mintid.SegmentInvalidPolicyError),
    (
        "segment percent",
        lambda: mintid.SegmentPolicy(10, 5, 40, fetch_at_percent=256),
        mintid.ArgumentOutOfRangeError,
    ),
    (
        "segment no fetch",
        lambda: mintid.SegmentAllocator(SEGMENTS).fetched(10, 10, 0),
        mintid.SegmentNoFetchError,
    ),
    ("segment row", lambda: fetching().fetched(5, 10, 0), mintid.SegmentInvalidRowError),
    ("relay policy", lambda: mintid.RelayPolicy(0, 1000), mintid.OutboxInvalidPolicyError),
    ("relay claim", lambda: RELAY.claim(2**64 - 1, 0), mintid.OutboxTimeOverflowError),
    ("outbox status", lambda: mintid.OutboxStatus.parse("gone"), mintid.OutboxUnknownStatusError),
    ("outbox rows", lambda: mintid.outbox_enqueued(2), mintid.OutboxUnexpectedRowsError),
    ("outbox marked", lambda: mintid.check_outbox_marked(0, 1, 1), mintid.OutboxClaimLostError),
    (
        "outbox message",
        lambda: mintid.check_outbox_message("", "k", 0),
        mintid.OutboxInvalidMessageError,
    ),
    (
        "layout widths",
        lambda: mintid.SnowflakeLayout(time_bits=50),
        mintid.SnowflakeInvalidLayoutError,
    ),
    (
        "layout tick",
        lambda: mintid.SnowflakeLayout(tick_millis=0),
        mintid.SnowflakeInvalidLayoutError,
    ),
    (
        "layout bits > u8",
        lambda: mintid.SnowflakeLayout(time_bits=256),
        mintid.ArgumentOutOfRangeError,
    ),
    (
        "datacenter bits",
        lambda: CLASSIC.with_datacenter_bits(11),
        mintid.SnowflakeInvalidLayoutError,
    ),
    ("epoch", lambda: CLASSIC.with_epoch_millis(2**64 - 1), mintid.SnowflakeInvalidLayoutError),
    ("preset", lambda: mintid.SnowflakeLayout.preset("nope"), mintid.SnowflakeUnknownPresetError),
    ("worker", lambda: mintid.Snowflake(worker=1024), mintid.SnowflakeWorkerOutOfRangeError),
    ("negative worker", lambda: mintid.Snowflake(worker=-1), mintid.ArgumentNegativeError),
    (
        "preset by name",
        lambda: mintid.Snowflake(worker=1, layout="x"),
        mintid.SnowflakeUnknownPresetError,
    ),
    (
        "start after",
        lambda: mintid.Snowflake(1, "js-safe", starting_after=2**53),
        mintid.SnowflakeIdOutOfRangeError,
    ),
    (
        "start after time",
        lambda: mintid.Snowflake(1, starting_after_unix_millis=2**62),
        mintid.SnowflakeTimeExhaustedError,
    ),
    (
        "batch",
        lambda: mintid.Snowflake(worker=1).next_ids(2**16 + 1),
        mintid.ArgumentBatchTooLargeError,
    ),
    ("compose time", lambda: CLASSIC.compose(0, 0, 0), mintid.SnowflakeTimeOutOfRangeError),
    (
        "compose sequence",
        lambda: CLASSIC.compose_tick(0, 0, 4096),
        mintid.SnowflakeSequenceOutOfRangeError,
    ),
    (
        "compose worker",
        lambda: CLASSIC.compose_tick(0, 1024, 0),
        mintid.SnowflakeWorkerOutOfRangeError,
    ),
    ("decode sign bit", lambda: CLASSIC.decode(2**63), mintid.SnowflakeIdOutOfRangeError),
    ("decode > u64", lambda: CLASSIC.decode(2**64), mintid.ArgumentOutOfRangeError),
    (
        "worker id",
        lambda: mintid.SnowflakeLayout.DATACENTER_WORKER.worker_id(32, 0),
        mintid.SnowflakeWorkerOutOfRangeError,
    ),
    ("decimal", lambda: mintid.snowflake_from_decimal("12a"), mintid.SnowflakeInvalidTextError),
    (
        "decimal overflow",
        lambda: mintid.snowflake_from_decimal("9223372036854775808"),
        mintid.SnowflakeIdOutOfRangeError,
    ),
    ("base32", lambda: mintid.snowflake_from_base32("U"), mintid.SnowflakeInvalidTextError),
    ("to base32", lambda: mintid.snowflake_to_base32(2**63), mintid.SnowflakeIdOutOfRangeError),
    (
        "epoch ahead",
        lambda: mintid.Snowflake(1, clock=ManualClock(0)).next_id(),
        mintid.SnowflakeEpochInFutureError,
    ),
    ("parse uuid", lambda: mintid.parse_uuid("x"), mintid.UuidInvalidLengthError),
    ("parse uuid char", lambda: mintid.parse_uuid("g" * 32), mintid.UuidInvalidCharacterError),
    (
        "parse uuid base32",
        lambda: mintid.parse_uuid("8" + "0" * 25),
        mintid.UuidBase32OverflowError,
    ),
    ("format uuid", lambda: mintid.format_uuid(b"short"), mintid.ArgumentByteLengthError),
    ("inspect uuid", lambda: mintid.inspect_uuid(b"short"), mintid.ArgumentByteLengthError),
    ("uuid v8", lambda: mintid.uuid_v8(b""), mintid.ArgumentByteLengthError),
    ("uuid7 text", lambda: mintid.Uuid7.parse("nope"), mintid.Uuid7InvalidTextError),
    (
        "uuid7 version",
        lambda: mintid.Uuid7.parse("f81d4fae-7dec-41d0-a765-00a0c91e6bf6"),
        mintid.Uuid7WrongVersionError,
    ),
    (
        "uuid7 variant",
        lambda: mintid.Uuid7.parse("017f22e2-79b0-7cc3-18c4-dc0c0c07398f"),
        mintid.Uuid7WrongVariantError,
    ),
    ("uuid7 bytes", lambda: mintid.Uuid7.from_bytes(b"\x00" * 15), mintid.ArgumentByteLengthError),
    (
        "uuid7 time",
        lambda: mintid.Uuid7.from_fields(2**48, 0, 0),
        mintid.Uuid7TimestampOutOfRangeError,
    ),
    (
        "uuid7 rand_a",
        lambda: mintid.Uuid7.from_fields(0, 2**12, 0),
        mintid.Uuid7RandAOutOfRangeError,
    ),
    (
        "uuid7 rand_a > u16",
        lambda: mintid.Uuid7.from_fields(0, 2**16, 0),
        mintid.ArgumentOutOfRangeError,
    ),
    (
        "uuid7 rand_b",
        lambda: mintid.Uuid7.from_fields(0, 0, 2**62),
        mintid.Uuid7RandBOutOfRangeError,
    ),
    ("uuid7 rollback", lambda: rolled_back_uuid7(), mintid.Uuid7ClockRollbackError),
    (
        "uuid7 batch",
        lambda: mintid.Uuid7Generator().next_bytes(2**16 + 1),
        mintid.ArgumentBatchTooLargeError,
    ),
    ("policy bound", lambda: mintid.RollbackPolicy.wait(-1), mintid.ArgumentNegativeError),
    ("key empty", lambda: mintid.IdempotencyKey("", "s", "i"), mintid.KeyEmptyError),
    ("key long", lambda: mintid.IdempotencyKey("k", "s" * 65, "i"), mintid.KeyTooLongError),
    ("key char", lambda: mintid.IdempotencyKey("K", "s", "i"), mintid.KeyInvalidCharacterError),
    (
        "key header",
        lambda: mintid.IdempotencyKey.from_header("k", "s", '"abc'),
        mintid.KeyInvalidHeaderError,
    ),
    ("key text", lambda: mintid.IdempotencyKey.parse("nope"), mintid.KeyInvalidTextError),
    ("key fields", lambda: mintid.IdempotencyKey.from_fields("k", "s", []), mintid.KeyEmptyError),
    ("header", lambda: mintid.parse_idempotency_key_header(b""), mintid.KeyEmptyError),
    ("id fields", lambda: mintid.key_id_from_fields([]), mintid.KeyEmptyError),
    ("fingerprint json", lambda: mintid.fingerprint_json("{"), mintid.FingerprintInvalidJsonError),
    (
        "fingerprint string value",
        lambda: mintid.fingerprint('{"a":1}'),
        mintid.FingerprintStringValueError,
    ),
    (
        "fingerprint lone surrogate",
        lambda: mintid.fingerprint({"a": "\ud800"}),
        mintid.FingerprintLoneSurrogateError,
    ),
    (
        "fingerprint bytes value",
        lambda: mintid.fingerprint(b'{"a":1}'),
        mintid.FingerprintInvalidJsonError,
    ),
    (
        "fingerprint nan",
        lambda: mintid.fingerprint({"a": float("nan")}),
        mintid.FingerprintInvalidJsonError,
    ),
    (
        "fingerprint utf8",
        lambda: mintid.fingerprint_json(b'"\xff"'),
        mintid.FingerprintInvalidUtf8Error,
    ),
    (
        "fingerprint dup",
        lambda: mintid.fingerprint_json('{"a":1,"a":2}'),
        mintid.FingerprintDuplicateMemberError,
    ),
    (
        "fingerprint big",
        lambda: mintid.fingerprint({"n": 2**60}),
        mintid.FingerprintNumberOutOfRangeError,
    ),
    (
        "fingerprint pointer",
        lambda: mintid.fingerprint({}, include=["a"]),
        mintid.FingerprintInvalidPointerError,
    ),
    (
        "fingerprint text",
        lambda: mintid.Fingerprint.parse("md5:x"),
        mintid.FingerprintInvalidTextError,
    ),
    ("fingerprint digest", lambda: mintid.Fingerprint(b"short"), mintid.ArgumentByteLengthError),
    ("canonical", lambda: mintid.canonical_json("[1,]"), mintid.FingerprintInvalidJsonError),
    ("weak secret", lambda: mintid.KeyRing(1, b"short"), mintid.RequestIdWeakSecretError),
    ("key id", lambda: mintid.KeyRing(2**32, SECRET), mintid.ArgumentOutOfRangeError),
    (
        "duplicate key",
        lambda: mintid.KeyRing(1, SECRET).add(1, SECRET),
        mintid.RequestIdDuplicateKeyIdError,
    ),
    (
        "retire current",
        lambda: mintid.KeyRing(1, SECRET).retire(1),
        mintid.RequestIdCurrentKeyError,
    ),
    (
        "retire unknown",
        lambda: mintid.KeyRing(1, SECRET).retire(2),
        mintid.RequestIdUnknownKeyError,
    ),
    (
        "grant scope",
        lambda: mintid.KeyRing(1, SECRET).issue_grant("", 1),
        mintid.RequestIdInvalidScopeError,
    ),
    (
        "grant expiry",
        lambda: mintid.KeyRing(1, SECRET).issue_grant("s", 2**48),
        mintid.RequestIdExpiryOutOfRangeError,
    ),
    ("grant text", lambda: mintid.Grant.parse("x"), mintid.RequestIdMalformedGrantError),
    ("mint v4", lambda: GRANT.mint(uuid.uuid4()), mintid.Uuid7WrongVersionError),
    ("request id text", lambda: mintid.RequestId.parse("x"), mintid.RequestIdMalformedError),
    (
        "verify scope",
        lambda: RING.verify(MINTED.text, "other", now_millis=NOW),
        mintid.RequestIdBadTagError,
    ),
    (
        "verify expired",
        lambda: RING.verify(MINTED.text, "s", now_millis=2**47),
        mintid.RequestIdGrantExpiredError,
    ),
    (
        "verify old",
        lambda: RING.verify(MINTED.text, "s", now_millis=NOW + 10_000, max_age_millis=1),
        mintid.RequestIdTooOldError,
    ),
    (
        "verify future",
        lambda: RING.verify(MINTED.text, "s", now_millis=NOW - 10_000, max_skew_millis=1),
        mintid.RequestIdInFutureError,
    ),
    ("unsigned", lambda: mintid.RequestId.verify_unsigned("x"), mintid.RequestIdMalformedError),
    ("policy", lambda: mintid.RecordPolicy(lease_millis=0), mintid.RecordInvalidPolicyError),
    ("status", lambda: mintid.RecordStatus.parse("done"), mintid.RecordUnknownStatusError),
    ("stale fence", lambda: PENDING.complete(mintid.Fence(2, 1000)), mintid.RecordStaleTokenError),
    (
        "not pending",
        lambda: PENDING.complete(PENDING.fence).complete(PENDING.fence),
        mintid.RecordNotPendingError,
    ),
    ("claim conflict", lambda: CLAIM.apply(PENDING, 1000), mintid.RecordClaimConflictError),
    ("claim expired", lambda: CLAIM.apply(None, 10**9), mintid.RecordClaimExpiredError),
    (
        "time overflow",
        lambda: mintid.decide(None, INCOMING, 2**64 - 1, mintid.RecordPolicy()),
        mintid.RecordTimeOverflowError,
    ),
    (
        "token exhausted",
        lambda: mintid.decide(EXHAUSTED, INCOMING, 1000, mintid.RecordPolicy()),
        mintid.RecordTokenExhaustedError,
    ),
    ("clock", lambda: ManualClock(-5), mintid.ArgumentNegativeError),
]


def rolled_back_uuid7() -> object:
    clock = ManualClock(1_700_000_000_000)
    generator = mintid.Uuid7Generator(rollback=mintid.RollbackPolicy.fail(), clock=clock)
    generator.next_uuid()
    clock.rewind(1)
    return generator.next_uuid()


@pytest.mark.parametrize(("what", "action", "expected"), BAD_INPUT, ids=[b[0] for b in BAD_INPUT])
def test_bad_input_raises_its_class(
    what: str, action: Callable[[], object], expected: type[mintid.MintidError]
) -> None:
    with pytest.raises(expected) as raised:
        action()
    assert type(raised.value) is expected
    assert raised.value.code == expected.CODE
    assert raised.value.message and str(raised.value) == raised.value.message


WRONG_TYPES: list[tuple[str, Callable[[], object]]] = [
    ("worker", lambda: mintid.Snowflake(worker="1")),  # type: ignore[arg-type]
    ("bool worker", lambda: mintid.Snowflake(worker=True)),
    ("layout", lambda: mintid.Snowflake(worker=1, layout=3)),  # type: ignore[arg-type]
    ("rollback", lambda: mintid.Snowflake(worker=1, rollback="fail")),  # type: ignore[arg-type]
    ("preset", lambda: mintid.SnowflakeLayout.preset(1)),  # type: ignore[arg-type]
    ("decimal", lambda: mintid.snowflake_from_decimal(5)),  # type: ignore[arg-type]
    ("parse uuid", lambda: mintid.parse_uuid(b"x")),  # type: ignore[arg-type]
    ("format text", lambda: mintid.format_uuid("017f22e2-79b0-7cc3-98c4-dc0c0c07398f")),  # type: ignore[arg-type]
    ("uuid7 bytes", lambda: mintid.Uuid7.from_bytes("x")),  # type: ignore[arg-type]
    ("entropy", lambda: mintid.Uuid7Generator(entropy="x")),  # type: ignore[arg-type]
    ("key part", lambda: mintid.IdempotencyKey("k", 1, "i")),  # type: ignore[arg-type]
    ("header", lambda: mintid.parse_idempotency_key_header(1)),  # type: ignore[arg-type]
    ("pointers", lambda: mintid.fingerprint({}, include="/a")),
    ("raw body", lambda: mintid.fingerprint_bytes("raw")),  # type: ignore[arg-type]
    ("canonical value", lambda: mintid.canonical_json({"a": 1})),  # type: ignore[arg-type]
    ("derived", lambda: mintid.IdempotencyKey.derived("k", "s", "sha256:x")),  # type: ignore[arg-type]
    ("secret", lambda: mintid.KeyRing(1, "secret")),  # type: ignore[arg-type]
    ("mint value", lambda: GRANT.mint("x")),  # type: ignore[arg-type]
    ("incoming", lambda: mintid.decide(None, FINGERPRINT, 0, mintid.RecordPolicy())),  # type: ignore[arg-type]
    ("failure", lambda: PENDING.fail(PENDING.fence, "final", mintid.RecordPolicy())),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("what", "action"), WRONG_TYPES, ids=[w[0] for w in WRONG_TYPES])
def test_wrong_types_raise_type_error(what: str, action: Callable[[], object]) -> None:
    with pytest.raises(TypeError):
        action()


def test_key_errors_say_where() -> None:
    with pytest.raises(mintid.KeyInvalidCharacterError) as raised:
        mintid.IdempotencyKey("order.create", "tenant 7", "x")
    assert (raised.value.part, raised.value.position) == ("scope", 6)


def test_bad_form_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="form must be one of"):
        mintid.format_uuid(b"\x00" * 16, "braces")  # type: ignore[arg-type]


def test_unknown_codes_map_to_their_concern() -> None:
    assert mintid.error_class("snowflake.something_new") is mintid.SnowflakeError
    assert mintid.error_class("other.thing") is mintid.MintidError
    assert mintid.error_class("uuid7.wrong_version") is mintid.Uuid7WrongVersionError


def test_request_id_errors_carry_the_core_problem() -> None:
    """The HTTP problem of a failed verification comes from the core, not a host table."""
    now = time.time_ns() // 1_000_000
    grant = RING.issue_grant("user:1", now + 60_000)
    text = str(grant.mint())
    with pytest.raises(mintid.RequestIdError) as foreign:
        RING.verify(text, "user:2", now_millis=now)
    assert (foreign.value.code, foreign.value.problem_name) == (
        "request_id.bad_tag",
        "invalid_request_id",
    )
    with pytest.raises(mintid.RequestIdError) as expired:
        RING.verify(text, "user:1", now_millis=now + 120_000)
    assert (expired.value.code, expired.value.problem_name) == (
        "request_id.grant_expired",
        "grant_expired",
    )
    with pytest.raises(mintid.RequestIdError) as server_fault:
        RING.issue_grant("", now)
    assert server_fault.value.problem_name is None
    with pytest.raises(mintid.MintidError) as other:
        mintid.IdempotencyKey("", "s", "i")
    assert other.value.problem_name is None


# --- the core's error-code registry ------------------------------------------

PYTHON_SOURCES = Path(mintid.__file__).resolve().parent
CODE_LITERAL = re.compile(r"""["']((?:[a-z0-9]+_)*[a-z0-9]+\.[a-z][a-z0-9_]*)["']""")
CONCERNS = {entry.concern for entry in mintid.error_codes()}
#: Dotted literals that are no error codes: ASGI message types, a limit's name.
NOT_CODES = {"http.disconnect", "http.request", "record.response_body"}


def test_every_registry_code_has_exactly_one_class() -> None:
    classes = [*mintid.errors.__all__, *mintid.store.__all__]
    for entry in mintid.error_codes():
        if not entry.host:
            continue
        made = mintid.error_class(entry.code)
        assert entry.code == made.CODE, entry.code
        named = [
            name
            for name in classes
            if getattr(
                getattr(mintid.store, name, None) or getattr(mintid.errors, name), "CODE", ""
            )
            == entry.code
        ]
        assert len(named) == 1, (entry.code, named)


def test_the_declarations_match_the_registry() -> None:
    stub = (PYTHON_SOURCES / "errors.pyi").read_text(encoding="utf-8")
    declared = set(re.findall(r"^class (\w+)\(", stub, re.MULTILINE))
    assert declared == set(mintid.errors.__all__) - {"error_class", "error_codes", "ErrorCode"}


def test_python_raises_no_code_outside_the_registry() -> None:
    registered = {entry.code for entry in mintid.error_codes()}
    problems = {entry.code: entry.problem_name for entry in mintid.error_codes()}
    assert problems["request_id.grant_expired"] == "grant_expired"
    assert problems["store.unavailable"] == "storage_unavailable"
    for path in PYTHON_SOURCES.rglob("*.py"):
        if "_ffi" in path.parts:
            continue
        for code in CODE_LITERAL.findall(path.read_text(encoding="utf-8")):
            if code.partition(".")[0] in CONCERNS and code not in NOT_CODES:
                assert code in registered, f"{path.name}: {code}"


def template_pattern(template: str) -> re.Pattern[str]:
    """A pattern a message matches when it is ``template`` filled (a field matches anything)."""
    literal = re.split(r"\{[a-z_]+\}", template)
    return re.compile("(?s)" + ".+?".join(re.escape(piece) for piece in literal))


def test_every_code_has_a_message_template() -> None:
    for entry in mintid.error_codes():
        assert entry.template, entry.code
        assert re.fullmatch(r"(?:[^{}]|\{[a-z_]+\})+", entry.template), entry.code


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda: mintid.IdempotencyKey("", "s", "i"), "key.empty"),
        (lambda: mintid.IdempotencyKey.parse("nope"), "key.invalid_text"),
        (lambda: mintid.fingerprint_json("[1,]"), "fingerprint.invalid_json"),
        (lambda: mintid.RecordPolicy(lease_millis=-1), "argument.negative"),
    ],
)
def test_a_message_is_its_code_s_template_filled(call: Callable[[], object], code: str) -> None:
    # The same errors as in JS's and Kotlin's registry tests.
    templates = {entry.code: entry.template for entry in mintid.error_codes()}
    with pytest.raises(mintid.MintidError) as raised:
        call()
    assert raised.value.code == code
    assert template_pattern(templates[code]).fullmatch(str(raised.value)), (
        str(raised.value),
        templates[code],
    )
