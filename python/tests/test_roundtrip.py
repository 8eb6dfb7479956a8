"""Round trips, checked on generated inputs."""

from __future__ import annotations

import json
import uuid
from random import Random

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import mintid

U64 = st.integers(min_value=0, max_value=2**64 - 1)
IDS = st.integers(min_value=0, max_value=2**63 - 1)
FORMS = st.sampled_from(["hyphenated", "simple", "urn", "base32"])


@given(IDS)
def test_snowflake_text_forms_round_trip(snowflake_id: int) -> None:
    text = mintid.snowflake_to_base32(snowflake_id)
    assert len(text) == 13
    assert mintid.snowflake_from_base32(text) == snowflake_id
    assert mintid.snowflake_from_base32(text.lower()) == snowflake_id
    assert mintid.snowflake_from_decimal(str(snowflake_id)) == snowflake_id


@given(IDS, IDS)
def test_snowflake_base32_sorts_like_the_ids(a: int, b: int) -> None:
    assert (a < b) == (mintid.snowflake_to_base32(a) < mintid.snowflake_to_base32(b))


@given(
    st.integers(min_value=0, max_value=2**41 - 1),
    st.integers(min_value=0, max_value=1023),
    st.integers(min_value=0, max_value=4095),
)
def test_snowflake_compose_then_decode(tick: int, worker: int, sequence: int) -> None:
    layout = mintid.SnowflakeLayout.CLASSIC
    parts = layout.decode(layout.compose_tick(tick, worker, sequence))
    assert (parts.tick, parts.worker, parts.sequence) == (tick, worker, sequence)
    assert parts.unix_millis == layout.epoch_millis + tick


@given(st.binary(min_size=16, max_size=16), FORMS)
def test_uuid_text_forms_round_trip(data: bytes, form: mintid.TextForm) -> None:
    text = mintid.format_uuid(data, form)
    assert mintid.parse_uuid(text).bytes == data
    assert mintid.parse_uuid(text.upper() if form != "urn" else text).bytes == data
    if form == "hyphenated":
        assert text == str(uuid.UUID(bytes=data))


@given(
    st.integers(min_value=0, max_value=2**48 - 1),
    st.integers(min_value=0, max_value=2**12 - 1),
    st.integers(min_value=0, max_value=2**62 - 1),
)
def test_uuid7_fields_round_trip(unix_millis: int, rand_a: int, rand_b: int) -> None:
    value = mintid.Uuid7.from_fields(unix_millis, rand_a, rand_b)
    assert (value.unix_millis, value.rand_a, value.rand_b) == (unix_millis, rand_a, rand_b)
    assert value.uuid.version == 7
    assert mintid.Uuid7.parse(str(value)) == value
    assert mintid.Uuid7.from_bytes(value.bytes) == value
    assert mintid.Uuid7.parse(value.format("base32")) == value


@given(st.binary(min_size=16, max_size=16))
def test_uuid_v8_keeps_the_custom_bits(custom: bytes) -> None:
    made = mintid.uuid_v8(custom)
    assert made.version == 8 and made.variant == uuid.RFC_4122
    mask = (1 << 128) - 1 ^ (0xF << 76) ^ (0x3 << 62)
    assert made.int & mask == int.from_bytes(custom, "big") & mask


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=6), st.randoms())
def test_fingerprint_ignores_key_order_and_spacing(payload: dict[str, object], rng: Random) -> None:
    items = list(payload.items())
    rng.shuffle(items)
    shuffled = json.dumps(
        dict(items), indent=rng.choice([None, 2]), ensure_ascii=rng.random() < 0.5
    )
    assert mintid.fingerprint(payload) == mintid.fingerprint_json(shuffled)
    canonical = mintid.canonical_json(shuffled)
    assert mintid.canonical_json(canonical) == canonical
    assert mintid.fingerprint_json(canonical) == mintid.fingerprint(payload)


@given(st.binary(max_size=64))
def test_raw_bodies_and_json_text_never_collide(body: bytes) -> None:
    made = mintid.fingerprint_bytes(body)
    assert mintid.Fingerprint.parse(str(made)) == made
    assert made != mintid.fingerprint_json(b'"' + body.hex().encode() + b'"')


@given(
    st.from_regex(r"[a-z0-9._-]{1,32}", fullmatch=True),
    st.from_regex(r"[!-~]{1,64}", fullmatch=True),
    st.from_regex(r"[!-~]{1,64}", fullmatch=True),
)
def test_key_text_round_trips(kind: str, scope: str, key_id: str) -> None:
    key = mintid.IdempotencyKey(kind, scope, key_id)
    assert mintid.IdempotencyKey.parse(str(key)) == key
    assert (key.kind, key.scope, key.id) == (kind, scope, key_id)


@given(st.binary(min_size=32, max_size=64), st.text(min_size=1, max_size=40))
def test_minted_request_ids_verify_for_their_scope_only(secret: bytes, scope: str) -> None:
    # One byte under the 64-byte limit: ``scope + "x"`` below must still be a scope.
    assume(len(scope.encode()) < 64)
    ring = mintid.KeyRing(7, secret)
    now = 1_700_000_000_000
    grant = ring.issue_grant(scope, now + 1000)
    value = mintid.Uuid7.from_fields(now, 1, 2).uuid
    minted = mintid.RequestId.mint(grant, value)
    assert mintid.RequestId.parse(minted.text) == minted
    assert ring.verify(minted.text, scope, now_millis=now) == value
    with pytest.raises(mintid.RequestIdBadTagError):
        ring.verify(minted.text, scope + "x", now_millis=now)
