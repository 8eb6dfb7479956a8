"""Bad input at every entry point raises the right class, with the core's code."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import mintid
from mintid.testing import ManualClock

CLASSIC = mintid.SnowflakeLayout.CLASSIC

BAD_INPUT: list[tuple[str, Callable[[], object], type[mintid.MintidError]]] = [
    (
        "layout widths",
        lambda: mintid.SnowflakeLayout(time_bits=50),
        mintid.SnowflakeInvalidLayoutError,
    ),
    ("layout tick", lambda: mintid.SnowflakeLayout(tick_ms=0), mintid.SnowflakeInvalidLayoutError),
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
    ("epoch", lambda: CLASSIC.with_epoch_ms(2**64 - 1), mintid.SnowflakeInvalidLayoutError),
    ("preset", lambda: mintid.SnowflakeLayout.preset("nope"), mintid.SnowflakeUnknownPresetError),
    ("worker", lambda: mintid.Snowflake(worker=1024), mintid.SnowflakeWorkerOutOfRangeError),
    ("negative worker", lambda: mintid.Snowflake(worker=-1), mintid.ArgumentOutOfRangeError),
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
        lambda: mintid.Snowflake(1, starting_after_unix_ms=2**62),
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
    ("policy bound", lambda: mintid.RollbackPolicy.wait(-1), mintid.ArgumentOutOfRangeError),
    ("clock", lambda: ManualClock(-5), mintid.ArgumentOutOfRangeError),
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
]


@pytest.mark.parametrize(("what", "action"), WRONG_TYPES, ids=[w[0] for w in WRONG_TYPES])
def test_wrong_types_raise_type_error(what: str, action: Callable[[], object]) -> None:
    with pytest.raises(TypeError):
        action()


def test_bad_form_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="form must be one of"):
        mintid.format_uuid(b"\x00" * 16, "braces")  # type: ignore[arg-type]


def test_unknown_codes_map_to_their_concern() -> None:
    assert mintid.error_class("snowflake.something_new") is mintid.SnowflakeError
    assert mintid.error_class("other.thing") is mintid.MintidError
    assert mintid.error_class("uuid7.wrong_version") is mintid.Uuid7WrongVersionError
