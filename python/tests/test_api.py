"""The conveniences around the core: properties, equality, text forms, flows."""

from __future__ import annotations

import copy
import dataclasses
import datetime
import pickle
import re
import time
import uuid
from pathlib import Path

import pytest

import mintid


def test_layout_values_and_equality() -> None:
    classic = mintid.SnowflakeLayout()
    assert classic == mintid.SnowflakeLayout.CLASSIC == mintid.SnowflakeLayout.preset("CLASSIC")
    assert hash(classic) == hash(mintid.SnowflakeLayout.CLASSIC)
    assert classic != mintid.SnowflakeLayout.TWITTER
    assert classic.ids_per_tick == 4096 and not classic.is_js_safe
    assert mintid.SnowflakeLayout.JS_SAFE.is_js_safe
    assert classic.expires_at == datetime.datetime(
        2094, 9, 7, 15, 47, 35, 552000, datetime.timezone.utc
    )
    assert 0 < classic.remaining_millis() <= classic.lifetime_millis
    assert "sequence_bits=12" in repr(classic)
    assert set(mintid.SnowflakeLayout.preset_names()) >= {"classic", "js-safe"}
    moved = classic.with_epoch_millis(0).with_datacenter_bits(5)
    assert (moved.epoch_millis, moved.datacenter_bits) == (0, 5)
    assert moved.split_worker_id(moved.worker_id(3, 4)) == (3, 4)


def test_snowflake_parts_carry_a_datetime() -> None:
    generator = mintid.Snowflake(worker=9, layout="twitter")
    parts = generator.decode(generator.next_id())
    now = datetime.datetime.now(datetime.timezone.utc)
    assert abs((now - parts.datetime).total_seconds()) < 5
    assert generator.layout == mintid.SnowflakeLayout.TWITTER
    assert repr(generator).startswith("Snowflake(worker=9")
    assert generator.high_water is not None


def test_uuid7_value_type() -> None:
    value = mintid.Uuid7.parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398f")
    assert value.datetime == datetime.datetime(
        2022, 2, 22, 19, 22, 22, tzinfo=datetime.timezone.utc
    )
    assert value.format("urn") == "urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f"
    assert mintid.inspect_uuid(value.uuid).variant == "rfc9562"
    assert mintid.inspect_uuid(str(uuid.uuid4())).version == 4
    assert mintid.Uuid7Generator().rollback == mintid.RollbackPolicy.logical(10_000)
    assert mintid.Uuid7Generator(rollback=mintid.RollbackPolicy.fail()).rollback.kind == "fail"


def test_fingerprints_and_keys() -> None:
    made = mintid.fingerprint({"b": [1, 2.5, None], "a": "é"})
    assert made == mintid.fingerprint_json('{"a":"\\u00e9","b":[1,2.50,null]}')
    assert mintid.canonical_json('{"b": 1, "a": 2}') == '{"a":2,"b":1}'
    assert repr(made).startswith("Fingerprint('sha256:")
    assert len({made, mintid.Fingerprint(made.digest)}) == 1
    assert made.text == str(made) == str(mintid.Fingerprint.parse(made.text))
    key = mintid.IdempotencyKey("order.create", "user:1", "x")
    assert repr(key) == "IdempotencyKey('order.create', 'user:1', 'x')"
    assert mintid.IdempotencyKey.derived("k", "s", made) == mintid.IdempotencyKey.derived(
        "k", "s", mintid.fingerprint_json('{"a":"é","b":[1,2.5,null]}')
    )


def test_a_request_runs_once_and_is_replayed() -> None:
    policy = mintid.RecordPolicy(lease_millis=1_000, retention_millis=60_000)
    incoming = mintid.Incoming(mintid.fingerprint({"order": 1}))
    first = mintid.decide(None, incoming, 1_000, policy)
    assert isinstance(first, mintid.Execute) and first.problem is None
    stored = first.claim.apply(None, 1_000)
    duplicate = mintid.decide(stored, incoming, 1_200, policy)
    assert isinstance(duplicate, mintid.InProgress)
    assert duplicate.problem is mintid.Problem.IN_PROGRESS
    assert duplicate.problem.body("still running") == {
        "type": "https://mintid.dev/problems/in-progress",
        "title": "Request already in progress",
        "status": 409,
        "detail": "still running",
    }
    finished = stored.complete(first.claim.fence)
    assert finished.status is mintid.RecordStatus.SUCCEEDED
    again = mintid.decide(finished, incoming, 1_500, policy)
    assert again == mintid.Replay(None, mintid.Outcome.SUCCEEDED)
    other = mintid.Incoming(mintid.fingerprint({"order": 2}))
    assert isinstance(mintid.decide(finished, other, 1_500, policy), mintid.FingerprintMismatch)
    failed = stored.fail(first.claim.fence, mintid.Failure.RETRYABLE, policy)
    assert str(failed.status) == "failed_retryable"
    assert not finished.is_removable(2_000) and finished.is_removable(61_000)


def test_a_policy_copies_pickles_and_replaces_by_its_values() -> None:
    policy = mintid.RecordPolicy(lease_millis=1_000, retention_millis=60_000)
    incoming = mintid.Incoming(mintid.fingerprint({"order": 1}))
    made = [
        copy.copy(policy),
        copy.deepcopy(policy),
        pickle.loads(pickle.dumps(policy)),
        dataclasses.replace(policy, store_errors=False),
    ]
    for other in made:
        assert isinstance(mintid.decide(None, incoming, 1_000, other), mintid.Execute)
    assert made[:3] == [policy] * 3 and not made[3].store_errors
    assert dataclasses.asdict(policy)["lease_millis"] == 1_000
    with pytest.raises(mintid.RecordInvalidPolicyError):
        dataclasses.replace(policy, lease_millis=0)


def test_signed_request_ids_round_trip() -> None:
    ring = mintid.KeyRing(1, bytes(32))
    ring.rotate(2, bytes(range(32)))
    assert (ring.current_id, ring.key_ids) == (2, [2, 1])
    now = time.time_ns() // 1_000_000
    grant = ring.issue_grant("user:42", now + 60_000)
    minted = grant.mint()
    assert minted.uuid.version == 7 and minted.key_id == 2
    assert mintid.RequestId.verify(minted.text, ring, "user:42") == minted.uuid
    assert mintid.RequestId.verify_unsigned(str(mintid.uuid7())).version == 7
    assert "secret" not in repr(ring) and "grant_key" not in repr(grant)


def _glossary_names(column: int) -> list[str]:
    """The names one column of docs/spec.md's glossary table of fingerprints,
    grants, policies and errors gives (``KeyRing.issue_grant``, ``fingerprint``).
    """
    spec = (Path(__file__).resolve().parents[2] / "docs" / "spec.md").read_text(encoding="utf-8")
    table = spec.split("Fingerprints, grants, policies and errors", 1)[1].split("\n\n", 2)[1]
    names = []
    for row in table.splitlines()[2:]:
        cell = row.split("|")[column + 1]
        for span in re.findall(r"`([^`]+)`", cell):
            name = span.removeprefix("new ").split("(")[0].strip()
            if re.fullmatch(r"[A-Za-z_][\w.]*", name):
                names.append(name)
    return names


def test_the_glossary_names_are_the_python_names() -> None:
    names = _glossary_names(1)
    assert "fingerprint_json" in names
    for name in names:
        owner: object = mintid
        for part in name.split("."):
            assert hasattr(owner, part), name
            owner = getattr(owner, part)


def test_a_field_with_a_lone_surrogate_is_a_key_error_as_in_js() -> None:
    for call in (
        lambda: mintid.IdempotencyKey.from_fields("order.create", "user:1", ["a", "\ud800"]),
        lambda: mintid.key_id_from_fields(["\udc00"]),
    ):
        with pytest.raises(mintid.IdempotencyKeyError) as refused:
            call()
        assert (refused.value.code, refused.value.part) == ("key.invalid_character", "id")
    made = mintid.IdempotencyKey.from_fields(
        "order.create", "user:1", ["a", "\ufffd", "\U0001f600"]
    )
    assert made.kind == "order.create"
