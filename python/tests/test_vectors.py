"""Every case of every file in tests/vectors/, run through the Python API.

Each file has a runner; each case is dispatched on its ``op``. A file or an
``op`` without a runner fails its test: no vector is skipped silently.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import wire_vectors

import mintid
import mintid.http as mintid_http
from mintid import _wire_codec as wire
from mintid._native import ffi
from mintid._wire import Wire
from mintid._wire import spec as wire_spec
from mintid._wire_codec import error_bytes
from mintid.store import (
    IdempotencyStore,
    Outbox,
    OutboxMessage,
    SqliteDatabase,
    StoredResponse,
    StoreRequest,
    WorkerLeases,
)
from mintid.store._database import shutdown_wait_seconds
from mintid.testing import ManualClock

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors"

Case = dict[str, Any]


def _cases() -> Iterator[Any]:
    for path in sorted(VECTORS.glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            yield pytest.param(path.name, case, id=f"{path.stem}:{case['name']}")


def expect_error(case: Case, action: Callable[[], object]) -> None:
    """Run ``action`` and check it raises the class of the case's error code."""
    code = case["error"]
    with pytest.raises(mintid.MintidError) as raised:
        action()
    assert raised.value.code == code, raised.value
    assert type(raised.value) is mintid.error_class(code), "no leaf class for " + code
    assert raised.value.message


# --- snowflake.json ---------------------------------------------------------


def layout_of(spec: str | dict[str, Any]) -> mintid.SnowflakeLayout:
    if isinstance(spec, str):
        return mintid.SnowflakeLayout.preset(spec)
    return mintid.SnowflakeLayout(
        time_bits=spec["time_bits"],
        worker_bits=spec["worker_bits"],
        sequence_bits=spec["sequence_bits"],
        epoch_millis=int(spec["epoch_millis"]),
        tick_millis=int(spec["tick_millis"]),
        datacenter_bits=spec.get("datacenter_bits", 0),
    )


LAYOUT_FIELDS: dict[str, Callable[[mintid.SnowflakeLayout, Case], object]] = {
    "time_bits": lambda layout, _: layout.time_bits,
    "worker_bits": lambda layout, _: layout.worker_bits,
    "sequence_bits": lambda layout, _: layout.sequence_bits,
    "datacenter_bits": lambda layout, _: layout.datacenter_bits,
    "epoch_millis": lambda layout, _: str(layout.epoch_millis),
    "tick_millis": lambda layout, _: str(layout.tick_millis),
    "max_worker": lambda layout, _: str(layout.max_worker),
    "max_sequence": lambda layout, _: str(layout.max_sequence),
    "max_id": lambda layout, _: str(layout.max_id),
    "js_safe": lambda layout, _: layout.is_js_safe,
    "lifetime_millis": lambda layout, _: str(layout.lifetime_millis),
    "expires_at_unix_millis": lambda layout, _: str(layout.expires_at_unix_millis),
    "remaining_millis": lambda layout, case: str(
        layout.remaining_millis(int(case["now_unix_millis"]))
    ),
}


def check_id_text(snowflake_id: int, case: Case) -> None:
    assert str(snowflake_id) == case["id"]
    assert mintid.snowflake_to_base32(snowflake_id) == case["base32"]
    assert mintid.snowflake_from_base32(case["base32"]) == snowflake_id
    assert mintid.snowflake_from_decimal(case["id"]) == snowflake_id


def snowflake_layout(case: Case) -> None:
    layout = layout_of(case["layout"])
    for field, expected in case["expect"].items():
        assert LAYOUT_FIELDS[field](layout, case) == expected, field


def snowflake_compose(case: Case) -> None:
    layout = layout_of(case["layout"])
    worker, sequence = int(case["worker"]), int(case["sequence"])

    def compose() -> int:
        if "tick" in case:
            return layout.compose_tick(int(case["tick"]), worker, sequence)
        return layout.compose(int(case["unix_millis"]), worker, sequence)

    if "error" in case:
        expect_error(case, compose)
    else:
        check_id_text(compose(), case)


def snowflake_decode(case: Case) -> None:
    layout = layout_of(case["layout"])
    if "error" in case:
        expect_error(case, lambda: layout.decode(int(case["id"])))
        return
    parts = layout.decode(int(case["id"]))
    assert (str(parts.tick), str(parts.unix_millis)) == (case["tick"], case["unix_millis"])
    assert (str(parts.worker), str(parts.sequence)) == (case["worker"], case["sequence"])


def snowflake_worker_id(case: Case) -> None:
    layout = layout_of(case["layout"])
    datacenter, worker = int(case["datacenter"]), int(case["worker"])
    if "error" in case:
        expect_error(case, lambda: layout.worker_id(datacenter, worker))
        return
    whole = layout.worker_id(datacenter, worker)
    assert str(whole) == case["worker_id"]
    assert layout.split_worker_id(whole) == (datacenter, worker)


def snowflake_parse(read: Callable[[str], int]) -> Callable[[Case], None]:
    def run(case: Case) -> None:
        if "error" in case:
            expect_error(case, lambda: read(case["text"]))
        else:
            check_id_text(read(case["text"]), case)

    return run


def policy_of(spec: dict[str, Any] | None) -> mintid.RollbackPolicy | None:
    if spec is None:
        return None
    kind = spec.get("policy", spec.get("kind"))
    if kind == "fail":
        return mintid.RollbackPolicy.fail()
    if kind == "wait":
        return mintid.RollbackPolicy.wait(int(spec["max_millis"]))
    assert kind == "logical", spec
    return mintid.RollbackPolicy.logical(int(spec["max_millis"]))


def snowflake_generate(case: Case) -> None:
    clock = ManualClock(
        int(case["clock"]["start_millis"]), advance_on_pause=case["clock"]["advance_on_pause"]
    )
    sequence = case.get("sequence_policy")

    def build() -> mintid.Snowflake:
        return mintid.Snowflake(
            int(case["worker"]),
            layout_of(case["layout"]),
            rollback=policy_of(case.get("rollback")),
            sequence=None
            if sequence is None
            else (
                mintid.SequencePolicy.wait()
                if sequence["policy"] == "wait"
                else mintid.SequencePolicy.borrow_ahead(int(sequence["max_ticks"]))
            ),
            starting_after=int(case["starting_after_id"]) if "starting_after_id" in case else None,
            starting_after_unix_millis=int(case["starting_after_unix_millis"])
            if "starting_after_unix_millis" in case
            else None,
            clock=clock,
        )

    if "error" in case:
        expect_error(case, build)
        assert case["steps"] == []
        return
    generator = build()
    for step in case["steps"]:
        if "clock_millis" in step:
            clock.set(int(step["clock_millis"]))

        def call(step: Case = step) -> list[int]:
            if step["call"] == "batch":
                return generator.next_ids(step["count"])
            assert step["call"] == "next", step
            return [generator.next_id() for _ in range(step["count"])]

        if "error" in step:
            expect_error(step, call)
        else:
            ids = call()
            assert [str(i) for i in ids] == step["ids"]
            assert [mintid.snowflake_to_base32(i) for i in ids] == step["base32"]
        if "clock_after_millis" in step:
            assert str(clock.unix_millis) == step["clock_after_millis"]
        if "high_water" in step:
            assert str(generator.high_water) == step["high_water"]


def snowflake_layout_invalid(case: Case) -> None:
    expect_error(case, lambda: layout_of(case["layout"]))


# --- uuid7.json -------------------------------------------------------------


def check_uuid7_fields(value: mintid.Uuid7, case: Case) -> None:
    if "bytes" in case:
        assert value.bytes.hex() == case["bytes"]
    assert str(value.unix_millis) == case["unix_millis"]
    assert value.rand_a == case["rand_a"]
    assert str(value.rand_b) == case["rand_b"]
    assert value.counter == case["counter"]


def uuid7_from_fields(case: Case) -> None:
    def build() -> mintid.Uuid7:
        return mintid.Uuid7.from_fields(
            int(case["unix_millis"]), case["rand_a"], int(case["rand_b"])
        )

    if "error" in case:
        expect_error(case, build)
        return
    value = build()
    assert value.bytes.hex() == case["bytes"]
    assert value.counter == case["counter"]
    for form in ("hyphenated", "simple", "urn", "base32"):
        assert value.format(form) == case[form]
        assert mintid.Uuid7.parse(case[form]).bytes == value.bytes
    assert str(value) == case["hyphenated"]
    assert value.uuid == uuid.UUID(case["hyphenated"])


def uuid7_parse(case: Case) -> None:
    if "error" in case:
        expect_error(case, lambda: mintid.Uuid7.parse(case["text"]))
    else:
        check_uuid7_fields(mintid.Uuid7.parse(case["text"]), case)


def uuid7_parse_uuid(case: Case) -> None:
    if "error" in case:
        expect_error(case, lambda: mintid.parse_uuid(case["text"]))
        return
    parsed = mintid.parse_uuid(case["text"])
    assert parsed.bytes.hex() == case["bytes"]
    info = mintid.inspect_uuid(parsed)
    assert (info.version, info.variant) == (case["version"], case["variant"])


def uuid7_from_bytes(case: Case) -> None:
    data = bytes.fromhex(case["bytes"])
    if "error" in case:
        expect_error(case, lambda: mintid.Uuid7.from_bytes(data))
        return
    value = mintid.Uuid7.from_bytes(data)
    check_uuid7_fields(value, case)
    assert str(value) == case["hyphenated"]
    assert mintid.Uuid7.from_uuid(uuid.UUID(bytes=data)) == value


def uuid7_new_v8(case: Case) -> None:
    made = mintid.uuid_v8(bytes.fromhex(case["custom"]))
    assert made.bytes.hex() == case["bytes"]
    assert mintid.format_uuid(made) == case["hyphenated"]


def uuid7_generate(case: Case) -> None:
    first_step = case["steps"][0]
    clock = ManualClock(int(first_step["clock_millis"]))
    generator = mintid.Uuid7Generator(
        rollback=policy_of(case["policy"]), clock=clock, entropy=bytes.fromhex(case["entropy"])
    )
    previous = ""
    for step in case["steps"]:
        clock.set(int(step["clock_millis"]))
        if "error" in step:
            expect_error(step, generator.next_str)
            continue
        made = [generator.next_str() for _ in range(step.get("skip", 0) + len(step["expect"]))]
        for text in made:
            assert text > previous
            previous = text
        assert made[step.get("skip", 0) :] == step["expect"]


# --- keys.json --------------------------------------------------------------


def expect_key_error(case: Case, action: Callable[[], object]) -> None:
    expect_error(case, action)
    with pytest.raises(mintid.IdempotencyKeyError) as raised:
        action()
    if "part" in case:
        assert raised.value.part == case["part"]
    if "position" in case:
        assert raised.value.position == case["position"]


def check_key(key: mintid.IdempotencyKey, case: Case) -> None:
    assert str(key) == case["text"]
    if "id" in case:
        assert key.id == case["id"]
    assert mintid.IdempotencyKey.parse(case["text"]) == key
    assert (key.kind, key.scope) == (case["kind"], case["scope"])


def keys_new_key(case: Case) -> None:
    def build() -> mintid.IdempotencyKey:
        return mintid.IdempotencyKey(case["kind"], case["scope"], case["id"])

    if "error" in case:
        expect_key_error(case, build)
    else:
        check_key(build(), case)


def keys_id_from_fields(case: Case) -> None:
    def build() -> mintid.IdempotencyKey:
        return mintid.IdempotencyKey.from_fields(case["kind"], case["scope"], case["fields"])

    if "error" in case:
        expect_key_error(case, build)
        return
    check_key(build(), case)
    assert mintid.key_id_from_fields(case["fields"]) == case["id"]


def keys_derived_key(case: Case) -> None:
    def build() -> mintid.IdempotencyKey:
        fingerprint = mintid.Fingerprint.parse(case["fingerprint"])
        return mintid.IdempotencyKey.derived(case["kind"], case["scope"], fingerprint)

    if "error" in case:
        expect_key_error(case, build)
    else:
        check_key(build(), case)


def keys_parse_header(case: Case) -> None:
    header: str | bytes = case["header"] if "header" in case else bytes.fromhex(case["header_hex"])
    if "error" in case:
        expect_key_error(case, lambda: mintid.parse_idempotency_key_header(header))
        return
    assert mintid.parse_idempotency_key_header(header) == case["id"]
    key = mintid.IdempotencyKey.from_header("k", "s", header)
    assert key.id == case["id"]


def keys_parse_key_text(case: Case) -> None:
    if "error" in case:
        expect_key_error(case, lambda: mintid.IdempotencyKey.parse(case["text"]))
        return
    key = mintid.IdempotencyKey.parse(case["text"])
    assert (key.kind, key.scope, key.id) == (case["kind"], case["scope"], case["id"])
    assert str(key) == case["text"]


# --- fingerprint.json -------------------------------------------------------


def fingerprint_input(case: Case) -> str | bytes:
    return case["input"] if "input" in case else bytes.fromhex(case["input_hex"])


def fingerprint_fingerprint_json(case: Case) -> None:
    text = fingerprint_input(case)
    selection = {"include": case.get("include", []), "exclude": case.get("exclude", [])}
    if "error" in case:
        expect_error(case, lambda: mintid.fingerprint_json(text, **selection))
        with pytest.raises(mintid.FingerprintError) as raised:
            mintid.canonical_json(text, **selection)
        if "position" in case:
            assert raised.value.position == case["position"]
        return
    assert mintid.canonical_json(text, **selection) == case["canonical"]
    made = mintid.fingerprint_json(text, **selection)
    assert str(made) == case["fingerprint"]


def fingerprint_fingerprint_bytes(case: Case) -> None:
    assert str(mintid.fingerprint_bytes(bytes.fromhex(case["input_hex"]))) == case["fingerprint"]


def fingerprint_parse_fingerprint(case: Case) -> None:
    if "error" in case:
        expect_error(case, lambda: mintid.Fingerprint.parse(case["text"]))
        return
    parsed = mintid.Fingerprint.parse(case["text"])
    assert parsed.digest.hex() == case["digest_hex"]
    assert str(parsed) == case["text"]


# --- request_id.json --------------------------------------------------------


def ring_of(keys: list[dict[str, str]], current: str) -> mintid.KeyRing:
    by_id = {key["id"]: bytes.fromhex(key["secret"]) for key in keys}
    ring = mintid.KeyRing(int(current), by_id.pop(current))
    for key_id, secret in by_id.items():
        ring.add(int(key_id), secret)
    return ring


def request_id_issue_grant(case: Case) -> None:
    def issue() -> mintid.Grant:
        ring = ring_of([case["key"]], case["key"]["id"])
        return ring.issue_grant(case["scope"], int(case["expires"]))

    if "error" in case:
        expect_error(case, issue)
        return
    grant = issue()
    assert grant.grant_key.hex() == case["grant_key"]
    assert grant.text == str(grant) == case["grant"]
    assert mintid.Grant.parse(grant.text) == grant


def request_id_parse_grant(case: Case) -> None:
    if "error" in case:
        expect_error(case, lambda: mintid.Grant.parse(case["text"]))
        return
    grant = mintid.Grant.parse(case["text"])
    assert (str(grant.key_id), str(grant.expires_millis)) == (case["key_id"], case["expires"])
    assert grant.grant_key.hex() == case["grant_key"]


def request_id_mint(case: Case) -> None:
    grant = mintid.Grant.parse(case["grant"])
    minted = grant.mint(uuid.UUID(case["uuid"]))
    assert minted.tag.hex() == case["tag"]
    assert minted.text == case["request_id"]
    assert mintid.RequestId.mint(case["grant"], uuid.UUID(case["uuid"])) == minted
    assert mintid.RequestId.parse(minted.text) == minted


def request_id_verify(case: Case) -> None:
    ring = ring_of(case["keys"], case["current"])

    def verify() -> uuid.UUID:
        return mintid.RequestId.verify(
            case["request_id"],
            ring,
            case["scope"],
            now_millis=int(case["now"]),
            max_age_millis=int(case["max_age"]),
            max_skew_millis=int(case["max_skew"]),
        )

    if "error" in case:
        expect_error(case, verify)
    else:
        assert str(verify()) == case["expect"]


def request_id_verify_unsigned(case: Case) -> None:
    def verify() -> uuid.UUID:
        return mintid.RequestId.verify_unsigned(
            case["text"],
            now_millis=int(case["now"]),
            max_age_millis=int(case["max_age"]),
            max_skew_millis=int(case["max_skew"]),
        )

    if "error" in case:
        expect_error(case, verify)
    else:
        assert str(verify()) == case["expect"]


def request_id_key_ring(case: Case) -> None:
    ring: mintid.KeyRing | None = None
    for step in case["steps"]:

        def act(step: Case = step) -> None:
            nonlocal ring
            do = step["do"]
            if do == "new":
                key = step["key"]
                ring = mintid.KeyRing(int(key["id"]), bytes.fromhex(key["secret"]))
                return
            assert ring is not None, step
            if do == "retire":
                ring.retire(int(step["id"]))
                return
            key_id, secret = int(step["key"]["id"]), bytes.fromhex(step["key"]["secret"])
            assert do in ("add", "rotate"), step
            (ring.add if do == "add" else ring.rotate)(key_id, secret)

        if "error" in step:
            expect_error(step, act)
        else:
            assert step["expect"] == "ok", step
            act()
        if "current" in step:
            assert ring is not None and str(ring.current_id) == step["current"]
        else:
            assert ring is None


# --- record.json ------------------------------------------------------------


def record_policy_of(spec: dict[str, Any]) -> mintid.RecordPolicy:
    return mintid.RecordPolicy(
        lease_millis=int(spec["lease_millis"]),
        retention_millis=int(spec["retention_millis"]),
        store_errors=spec["store_errors"],
        retry_after_millis=int(spec["retry_after_millis"]),
        max_wait_millis=int(spec["max_wait_millis"]),
        poll_millis=int(spec["poll_millis"]),
    )


def record_of(spec: dict[str, Any]) -> mintid.Record:
    return mintid.Record(
        mintid.RecordStatus.parse(spec["status"]),
        mintid.Fingerprint(bytes.fromhex(spec["fingerprint"])),
        int(spec["token"]),
        int(spec["lease_deadline"]),
        int(spec["created"]),
        int(spec["expires"]),
    )


def record_fields(record: mintid.Record) -> dict[str, Any]:
    return {
        "status": str(record.status),
        "fingerprint": record.fingerprint.digest.hex(),
        "token": str(record.token),
        "lease_deadline": str(record.lease_deadline_millis),
        "created": str(record.created_millis),
        "expires": str(record.expires_millis),
    }


def check_decision(decision: mintid.Decision, expect: dict[str, Any]) -> None:
    assert expect["decision"] == decision.NAME
    assert (None if decision.problem is None else decision.problem.problem_name) == expect.get(
        "problem"
    )
    if isinstance(decision, mintid.Execute):
        claimed = decision.claim.record
        assert claimed.status is mintid.RecordStatus.PENDING
        fields = record_fields(claimed)
        for name in ("token", "lease_deadline", "created", "expires"):
            assert fields[name] == expect[name], name
        expected = decision.claim.expected
        replaces = expect["replaces"]
        if replaces is None:
            assert expected is None
        else:
            assert expected is not None
            assert str(expected.fence.token) == replaces["token"]
            assert str(expected.fence.created_millis) == replaces["created"]
            assert str(expected.status) == replaces["status"]
    elif isinstance(decision, mintid.Replay):
        assert str(decision.outcome) == expect["outcome"]
    elif isinstance(decision, mintid.InProgress):
        assert str(decision.retry_after_millis) == expect["retry_after_millis"]
        assert str(decision.retry_after_secs) == expect["retry_after_secs"]
    elif isinstance(decision, mintid.Wait):
        assert str(decision.poll_millis) == expect["poll_millis"]


def record_sequence(case: Case) -> None:
    policy = record_policy_of(case["policy"])
    store: mintid.Record | None = None
    claims: dict[str, mintid.Claim] = {}
    fences: dict[str, mintid.Fence] = {}
    for step in case["steps"]:
        do, expect = step["do"], step.get("expect")
        if do == "decide":
            incoming = mintid.Incoming(
                mintid.Fingerprint(bytes.fromhex(step["fingerprint"])),
                key_created_millis=int(step["key_created"]) if "key_created" in step else None,
                waited_millis=int(step.get("waited", "0")),
            )

            def run(
                incoming: mintid.Incoming = incoming,
                now: int = int(step["now"]),
                existing: mintid.Record | None = store,
            ) -> object:
                return mintid.decide(existing, incoming, now, policy)

            if "error" in expect:
                expect_error(expect, run)
                continue
            decision = run()
            assert isinstance(decision, mintid.Decision)
            check_decision(decision, expect)
            if isinstance(decision, mintid.Execute):
                claims[step["worker"]] = decision.claim
        elif do == "claim":
            claim = claims[step["worker"]]
            if expect == "ok":
                store = claim.apply(store, int(step["now"]))
                fences[step["worker"]] = claim.fence
            else:

                def apply(
                    claim: mintid.Claim = claim,
                    now: int = int(step["now"]),
                    current: mintid.Record | None = store,
                ) -> mintid.Record:
                    return claim.apply(current, now)

                expect_error(expect, apply)
        elif do in ("complete", "fail"):
            assert store is not None
            fence = fences[step["worker"]]

            def end(
                step: Case = step, fence: mintid.Fence = fence, current: mintid.Record = store
            ) -> mintid.Record:
                if step["do"] == "complete":
                    return current.complete(fence)
                failure = mintid.Failure[step["failure"].upper()]
                return current.fail(fence, failure, policy)

            if expect == "ok":
                store = end()
            else:
                expect_error(expect, end)
        elif do == "check":
            assert (None if store is None else record_fields(store)) == expect
        elif do == "store":
            store = record_of(step["record"])
        else:
            assert do == "cleanup", step
            assert store is not None
            removable = store.is_removable(int(step["now"]))
            assert ("removed" if removable else "kept") == expect
            if removable:
                store = None


def record_status(case: Case) -> None:
    if "error" in case:
        expect_error(case, lambda: mintid.RecordStatus.parse(case["text"]))
    else:
        assert str(mintid.RecordStatus.parse(case["text"])) == case["expect"]


def record_policy(case: Case) -> None:
    if "error" in case:
        expect_error(case, lambda: record_policy_of(case["policy"]))
    else:
        assert case["expect"] == "ok"
        record_policy_of(case["policy"])


def record_problem(case: Case) -> None:
    problem = mintid.Problem[case["problem"].upper()]
    assert problem.problem_name == case["problem"]
    assert (problem.status, problem.type_uri, problem.title) == (
        case["status"],
        case["type"],
        case["title"],
    )


def record_retry_after_secs(case: Case) -> None:
    assert str(mintid.retry_after_secs(int(case["millis"]))) == case["expect"]


def record_http_constants(case: Case) -> None:
    assert case["problem_content_type"] == mintid.PROBLEM_CONTENT_TYPE
    assert case["replayed_header"] == mintid.REPLAYED_HEADER
    assert case["replayed_value"] == mintid.REPLAYED_VALUE
    assert case["retry_after_header"] == mintid.RETRY_AFTER_HEADER


# --- lease.json -------------------------------------------------------------


def lease_policy_of(spec: dict[str, Any]) -> mintid.LeasePolicy:
    return mintid.LeasePolicy(
        layout_of(spec["layout"]),
        lease_millis=int(spec["lease_millis"]),
        renew_interval_millis=int(spec["renew_interval_millis"]),
        safety_margin_millis=int(spec["safety_margin_millis"]),
        renew_retry_millis=int(spec["renew_retry_millis"]),
        max_skew_millis=int(spec["max_skew_millis"]),
        max_start_wait_millis=int(spec["max_start_wait_millis"]),
    )


def lease_row_of(spec: dict[str, Any]) -> mintid.WorkerLease:
    return mintid.WorkerLease(
        int(spec["worker_id"]),
        int(spec["fencing_token"]),
        int(spec["lease_deadline"]),
        int(spec["high_water"]),
        spec["held"],
    )


def lease_row_fields(row: mintid.WorkerLease) -> dict[str, Any]:
    return {
        "worker_id": str(row.worker_id),
        "fencing_token": str(row.fencing_token),
        "lease_deadline": str(row.lease_deadline_millis),
        "high_water": str(row.high_water_millis),
        "held": row.held,
    }


def lease_policy(case: Case) -> None:
    if "error" in case:
        expect_error(case, lambda: lease_policy_of(case["policy"]))
    else:
        assert str(lease_policy_of(case["policy"]).max_worker) == case["expect"]["max_worker"]


def lease_acquire(case: Case) -> None:
    policy = lease_policy_of(case["policy"])

    def acquire() -> mintid.Acquisition:
        return mintid.acquire_lease(lease_row_of(case["row"]), int(case["now"]), policy)

    if "error" in case:
        expect_error(case, acquire)
        return
    made, expect = acquire(), case["expect"]
    assert lease_row_fields(made.lease) == expect["lease"]
    assert str(made.expected_token) == expect["expected_token"]
    assert (str(made.start_after_millis), str(made.ready_at_millis)) == (
        expect["start_after"],
        expect["ready_at"],
    )
    assert made.acquired_millis == int(case["now"])


def lease_none_found(case: Case) -> None:
    policy = lease_policy_of(case["policy"])

    def decide() -> str:
        return mintid.lease_none_found(int(case["present"]), int(case["free"]), policy)

    if "error" in case:
        expect_error(case, decide)
    else:
        assert decide() == case["expect"]


def lease_guard(case: Case) -> None:
    policy = lease_policy_of(case["policy"])
    acquisition = mintid.acquire_lease(lease_row_of(case["row"]), int(case["now"]), policy)
    guard = mintid.LeaseGuard(acquisition, policy)
    assert (guard.worker_id, guard.fencing_token) == (
        acquisition.lease.worker_id,
        acquisition.lease.fencing_token,
    )
    assert (guard.start_after_millis, guard.ready_at_millis) == (
        acquisition.start_after_millis,
        acquisition.ready_at_millis,
    )
    renewal: mintid.LeaseRenewal | None = None
    for step in case["steps"]:
        do, expect = step["do"], step.get("expect")

        def act(step: Case = step) -> object:
            nonlocal renewal
            if step["do"] == "check":
                guard.check(int(step["now"]))
            elif step["do"] == "admit":
                guard.admit(int(step["id"]))
            elif step["do"] == "admit_all":
                guard.admit_all(int(i) for i in step["ids"])
            elif step["do"] == "renewal":
                renewal = guard.renewal(int(step["now"]), int(step["high_water"]))
                return renewal
            else:
                assert step["do"] == "renewed", step
                assert renewal is not None
                guard.renewed(renewal, int(step["rows"]))
            return None

        if do in ("check", "admit", "admit_all", "renewal", "renewed"):
            if isinstance(expect, dict) and "error" in expect:
                expect_error(expect, act)
                continue
            made = act()
            if do == "renewal":
                assert isinstance(made, mintid.LeaseRenewal)
                assert (str(made.lease_deadline_millis), str(made.high_water_millis)) == (
                    expect["lease_deadline"],
                    expect["high_water"],
                )
                assert (made.worker_id, made.fencing_token, made.now_millis) == (
                    guard.worker_id,
                    guard.fencing_token,
                    int(step["now"]),
                )
            else:
                assert expect == "ok", step
        elif do == "renew_due":
            assert guard.renew_due(int(step["now"])) is expect
        elif do == "renewal_failed":
            guard.renewal_failed(int(step["now"]))
        elif do == "release":
            release = guard.release(int(step["now"]), int(step["high_water"]))
            assert str(release.high_water_millis) == expect["high_water"]
        else:
            assert do == "state", step
            assert {
                "lease_deadline": str(guard.lease_deadline_millis),
                "stop_at": str(guard.stop_at_millis),
                "next_renewal_at": str(guard.next_renewal_at_millis),
                "live": guard.is_live,
            } == expect


# --- segment.json -----------------------------------------------------------


def segment_policy_of(spec: dict[str, Any]) -> mintid.SegmentPolicy:
    return mintid.SegmentPolicy(
        int(spec["initial_step"]),
        int(spec["min_step"]),
        int(spec["max_step"]),
        fetch_at_percent=spec["fetch_at_percent"],
        grow_below_millis=int(spec["grow_below_millis"]),
        shrink_above_millis=int(spec["shrink_above_millis"]),
    )


def segment_policy(case: Case) -> None:
    if "error" in case:
        expect_error(case, lambda: segment_policy_of(case["policy"]))
    else:
        assert case["expect"] == "ok"
        segment_policy_of(case["policy"])


def segment_adapt(case: Case) -> None:
    policy = segment_policy_of(case["policy"])
    assert str(policy.adapt(int(case["step"]), int(case["lasted"]))) == case["expect"]


def optional_text(value: int | None) -> str | None:
    return None if value is None else str(value)


def segment_allocator(case: Case) -> None:
    allocator = mintid.SegmentAllocator(segment_policy_of(case["policy"]))
    for step in case["steps"]:
        do, expect = step["do"], step.get("expect")
        if do == "next":
            assert [optional_text(allocator.next_id()) for _ in expect] == expect
        elif do == "fill":
            assert [str(i) for i in allocator.fill(int(step["count"]))] == expect
        elif do == "fetch_due":
            assert optional_text(allocator.fetch_due(int(step["now"]))) == expect
        elif do == "fetched":

            def fetched(step: Case = step) -> None:
                allocator.fetched(int(step["max_id"]), int(step["step"]), int(step["now"]))

            if expect == "ok":
                fetched()
            else:
                expect_error(expect, fetched)
        elif do == "fetch_failed":
            allocator.fetch_failed()
        else:
            assert do == "state", step
            assert {
                "remaining": str(allocator.remaining),
                "step": str(allocator.step),
                "in_flight": allocator.fetch_in_flight,
            } == expect


# --- outbox.json ------------------------------------------------------------


def relay_policy_of(spec: dict[str, Any]) -> mintid.RelayPolicy:
    return mintid.RelayPolicy(
        int(spec["batch_size"]),
        int(spec["claim_millis"]),
        base_backoff_millis=int(spec["base_backoff_millis"]),
        max_backoff_millis=int(spec["max_backoff_millis"]),
        jitter_percent=spec["jitter_percent"],
        max_attempts=int(spec["max_attempts"]),
    )


def outbox_case(run: Callable[[Case], object]) -> Callable[[Case], None]:
    """A runner comparing ``run(case)`` with ``expect``, or its error with ``error``."""

    def check(case: Case) -> None:
        if "error" in case:
            expect_error(case, lambda: run(case))
        else:
            assert run(case) == case["expect"]

    return check


def outbox_claim(case: Case) -> object:
    claim = relay_policy_of(case["policy"]).claim(int(case["now"]), int(case["draw"]))
    assert claim.now_millis == int(case["now"])
    return {
        "claim_token": str(claim.claim_token),
        "claimed_until": str(claim.claimed_until_millis),
        "batch_size": str(claim.batch_size),
    }


def outbox_after_failure(case: Case) -> object:
    policy = relay_policy_of(case["policy"])
    retry = policy.after_failure(int(case["attempts"]), int(case["now"]), int(case["draw"]))
    return "dead" if retry is None else {"retry": str(retry)}


def outbox_marked(case: Case) -> object:
    mintid.check_outbox_marked(int(case["rows"]), int(case["message_id"]), int(case["claim_token"]))
    return "ok"


def outbox_message(case: Case) -> object:
    mintid.check_outbox_message(case["kind"], case["business_key"], int(case["payload_len"]))
    return "ok"


def outbox_policy(case: Case) -> object:
    relay_policy_of(case["policy"])
    return "ok"


# --- http.json --------------------------------------------------------------


def http_outcome(case: Case, action: Callable[[], Any], check: Callable[[Any], None]) -> None:
    """Check ``action``'s error (code, class, position) or hand its result to ``check``."""
    if "error" in case:
        expect_error(case, action)
        with pytest.raises(mintid.HttpError) as raised:
            action()
        if "position" in case:
            assert raised.value.position == case["position"], raised.value
    else:
        check(action())


def http_default_kind(case: Case) -> None:
    http_outcome(
        case,
        lambda: mintid_http.default_kind(case["method"], case["path"]),
        lambda kind: _equal(kind, case["kind"]),
    )


def _equal(actual: object, expected: object) -> None:
    assert actual == expected


def http_is_json_content_type(case: Case) -> None:
    assert mintid_http.is_json_content_type(case["content_type"]) is case["expect"]


def http_fingerprint_body(case: Case) -> None:
    body = bytes.fromhex(case["body"])
    http_outcome(
        case,
        lambda: mintid_http.fingerprint_body(case["content_type"], body),
        lambda fingerprint: _equal(str(fingerprint), case["fingerprint"]),
    )


def http_fingerprint_request(case: Case) -> None:
    body = bytes.fromhex(case["body"])
    http_outcome(
        case,
        lambda: mintid_http.fingerprint_request(case["content_type"], case["query"], body),
        lambda fingerprint: _equal(str(fingerprint), case["fingerprint"]),
    )


def http_problem_document(case: Case) -> None:
    problem = next(p for p in mintid.Problem if p.problem_name == case["problem"])
    document = mintid_http.problem_document(problem, case.get("detail"))
    assert document == case["body"].encode()


def http_status_document(case: Case) -> None:
    http_outcome(
        case,
        lambda: mintid_http.status_document(case["status"], case.get("detail")),
        lambda body: _equal(body, case["body"].encode()),
    )


def http_grant_document(case: Case) -> None:
    document = mintid_http.grant_document(case["grant"], int(case["expires"]))
    assert document == case["body"].encode()


def http_encode_envelope(case: Case) -> None:
    headers = tuple((name, value) for name, value in case["headers"])

    def check(stored: mintid_http.StoredEnvelope) -> None:
        assert stored.content_type == case["content_type"]
        assert stored.body.hex() == case["envelope"]

    http_outcome(
        case,
        lambda: mintid_http.encode_envelope(
            case["status"], headers, bytes.fromhex(case["body"]), tuple(case["stored_headers"])
        ),
        check,
    )


def http_decode_envelope(case: Case) -> None:
    def check(response: mintid_http.EnvelopeResponse) -> None:
        assert response.status == case["status"]
        assert [list(pair) for pair in response.headers] == case["headers"]
        assert response.body.hex() == case["body"]

    http_outcome(
        case,
        lambda: mintid_http.decode_envelope(case["content_type"], bytes.fromhex(case["envelope"])),
        check,
    )


def http_defaults(case: Case) -> None:
    assert case["idempotency_key_header"] == mintid_http.IDEMPOTENCY_KEY_HEADER
    assert case["request_id_header"] == mintid_http.REQUEST_ID_HEADER
    assert str(mintid_http.DEFAULT_BODY_LIMIT) == case["body_limit"]
    assert list(mintid_http.DEFAULT_METHODS) == case["methods"]
    assert list(mintid_http.DEFAULT_STORED_HEADERS) == case["stored_headers"]
    assert str(mintid_http.DEFAULT_GRANT_TTL_MILLIS) == case["grant_ttl_millis"]
    assert case["grant_content_type"] == mintid_http.GRANT_CONTENT_TYPE
    empty = mintid_http.encode_envelope(200, (), b"", ())
    assert empty.body == f"{case['envelope_magic']}200\r\n\r\n".encode()
    assert json.loads(mintid_http.status_document(413))["type"] == case["about_blank"]


def id_buffer_fresh_until(case: Case) -> None:
    got = ffi.id_buffer_fresh_until(int(case["first_tick_start_millis"]), int(case["tick_millis"]))
    assert str(got) == case["fresh_until_millis"]


def id_buffer_next_batch_size(case: Case) -> None:
    got = ffi.id_buffer_next_batch_size(int(case["handed_out"]), int(case["cap"]))
    assert str(got) == case["size"]


def id_buffer_batch_cap(case: Case) -> None:
    assert str(ffi.id_buffer_batch_cap(int(case["ids_per_tick"]))) == case["cap"]


def id_buffer_hand_out(case: Case) -> None:
    # The buffers' own test: an ID taken at wall-clock nanosecond `now` goes out
    # while `now < (fresh_until + 1) * 1_000_000`; try the last nanosecond of each
    # millisecond read.
    fresh_until = ffi.id_buffer_fresh_until(
        int(case["first_tick_start_millis"]), int(case["tick_millis"])
    )
    deadline_ns = (fresh_until + 1) * 1_000_000
    out = 0
    for now_millis in case["now_millis"]:
        if not (int(now_millis) * 1_000_000 + 999_999 < deadline_ns):
            break
        out += 1
    assert str(out) == case["handed_out"]


# --- storable_text.json -----------------------------------------------------
# A Python ``str`` reaches the core as the wire passes an error text
# (``error_bytes``: UTF-8, a lone surrogate as its three ``surrogatepass``
# bytes), then the core's rule for bytes: each op checks that this crossing
# gives the expected text.


def storable(raw: bytes, case: Case) -> None:
    got = ffi.storable_text_from_bytes(raw, int(case["max_bytes"]))
    assert got == case["expect"], (got, case["expect"])


def storable_text(case: Case) -> None:
    storable(error_bytes(case["text"]), case)


def storable_utf8(case: Case) -> None:
    raw = bytes.fromhex(case["hex"])
    storable(raw, case)
    try:
        text = raw.decode("utf-8", "surrogatepass")  # a str holding its lone surrogates
    except UnicodeDecodeError:
        return  # not a Python string's bytes: only the bytes cross
    storable(error_bytes(text), case)


def storable_utf16(case: Case) -> None:
    # The code units as a Python str: a pair is one character, a lone surrogate stays.
    text = bytes.fromhex(case["units"]).decode("utf-16-be", "surrogatepass")
    storable(error_bytes(text), case)


def storable_raised_text(case: Case) -> None:
    # Through the store, as an operation raises it: the core composes the text from the
    # exception's type name and message, and keeps it with the released (retryable) record.
    raised = type(case["type_name"], (Exception,), {})
    database = SqliteDatabase(":memory:")
    database.migrate()
    store = IdempotencyStore(database, mintid.RecordPolicy())
    key = mintid.IdempotencyKey("order.create", "tenant-1", "raised")

    def operation() -> StoredResponse:
        raise raised(case["message"])

    with pytest.raises(raised):
        store.run_once(key, StoreRequest(mintid.Fingerprint(bytes(32))), operation)
    stored = store.load(key)
    assert stored is not None
    assert stored.error == case["expect"], (stored.error, case["expect"])


# --- limits.json ------------------------------------------------------------
# Each argument as the package passes it, through the API (a lease's owner as stored, a
# message id as enqueued) or the wire (a cleanup's first statement: its batch size is the
# last parameter); the histograms' buckets as the registry gives them to the recorder.


def limits_argument(case: Case) -> None:
    argument, value = case["argument"], case["value"]
    database = SqliteDatabase(":memory:")
    database.migrate()
    if argument == "lease.owner":
        leases = WorkerLeases(database, mintid.LeasePolicy())
        guard = leases.acquire(value)
        row = leases.load(guard.worker_id)
        assert row is not None
        assert row.owner == case["expect"], row.owner
    elif argument == "outbox.message_id":
        outbox = Outbox(database, mintid.RelayPolicy())
        message = OutboxMessage(int(value), "order.created", "order-7", b"{}")

        def enqueue() -> None:
            with database.transaction(write=True) as connection:
                outbox.enqueue(connection, message)

        if "error" in case:
            expect_error(case, enqueue)
            return
        enqueue()
        stored = outbox.load("order.created", "order-7")
        assert stored is not None
        assert stored.message_id == int(case["expect"])
    else:
        kinds = {"record_cleanup": wire.RECORD_CLEANUP, "outbox_cleanup": wire.OUTBOX_CLEANUP}
        kind, _, field = argument.partition(".")
        assert kind in kinds and field == "batch_size", f"no runner for argument {argument!r}"
        before = wire.u64(0) if kind == "outbox_cleanup" else b""
        spec = wire_spec(kinds[kind], database.manifest, before + wire.u64(int(value)))
        _name, params = wire.run(Wire(spec).start(0))
        assert params[-1] == int(case["expect"]), params


def limits_bound(case: Case) -> None:
    bounds = {"shutdown_wait_millis": shutdown_wait_seconds() * 1000}
    assert bounds[case["bound"]] == int(case["value"]), case["bound"]


def limits_histogram(case: Case) -> None:
    by_name = {metric.name: metric for metric in ffi.metrics()}
    assert list(by_name[case["metric"]].buckets) == case["buckets"]


# --- api.json ---------------------------------------------------------------


def api_case(made: Callable[[Case], object]) -> Callable[[Case], None]:
    """A public call's result (or its error code) checked against the case."""

    def run(case: Case) -> None:
        if "error" in case:
            expect_error(case, lambda: made(case))
        else:
            assert made(case) == case["expect"], case["name"]

    return run


def api_fingerprint(case: Case) -> object:
    selection = {"include": case.get("include", []), "exclude": case.get("exclude", [])}
    value = bytes.fromhex(case["value_bytes"]) if "value_bytes" in case else case["value"]
    return str(mintid.fingerprint(value, **selection))


def api_fingerprint_json(case: Case) -> object:
    selection = {"include": case.get("include", []), "exclude": case.get("exclude", [])}
    text = bytes.fromhex(case["text_bytes"]) if "text_bytes" in case else case["text"]
    return str(mintid.fingerprint_json(text, **selection))


def api_issue_grant(case: Case) -> object:
    ring = mintid.KeyRing(case["key_id"], bytes.fromhex(case["secret"]))
    grant = ring.issue_grant(case["scope"], int(case["expires_millis"]))
    assert isinstance(grant, mintid.Grant)
    return {
        "text": grant.text,
        "key_id": grant.key_id,
        "expires_millis": str(grant.expires_millis),
        "grant_key": grant.grant_key.hex(),
    }


def api_policy(made: Callable[..., object], fields: list[str]) -> Callable[[Case], object]:
    """A policy built from the case's arguments only, read back field by field."""

    def run(case: Case) -> object:
        args = {name: int(value) for name, value in case["args"].items()}
        policy = made(**args)
        read = {name: getattr(policy, name) for name in fields}
        return {
            name: v if isinstance(v, bool) or name.endswith("percent") else str(v)
            for name, v in read.items()
        }

    return run


# --- db_error.json -----------------------------------------------------------


def db_error_classify(case: Case) -> None:
    dialect = {"postgres": ffi.Dialect.POSTGRES, "mysql": ffi.Dialect.MYSQL}.get(
        case["dialect"], ffi.Dialect.SQLITE
    )
    assert case["dialect"] in ("postgres", "mysql", "sqlite")
    made = ffi.classify_db_error(
        dialect, case.get("code"), case.get("sqlstate"), case.get("message")
    )
    assert made.name.lower() == case["class"]


def api_decide(case: Case) -> object:
    """``decide(existing, incoming, now_millis, policy)``, as every host orders it."""
    stored = case["existing"]
    existing = (
        None
        if stored is None
        else mintid.Record(
            mintid.RecordStatus.parse(stored["status"]),
            mintid.Fingerprint.parse(stored["fingerprint"]),
            int(stored["token"]),
            int(stored["lease_deadline_millis"]),
            int(stored["created_millis"]),
            int(stored["expires_millis"]),
        )
    )
    made: Callable[..., mintid.RecordPolicy] = mintid.RecordPolicy
    policy = made(**{name: int(value) for name, value in case["args"].items()})
    incoming = mintid.Incoming(mintid.Fingerprint.parse(case["fingerprint"]))
    decision = mintid.decide(existing, incoming, int(case["now_millis"]), policy)
    if not isinstance(decision, mintid.Execute):
        return {"decision": decision.NAME}
    record = decision.claim.record
    return {
        "decision": decision.NAME,
        "token": str(record.token),
        "lease_deadline_millis": str(record.lease_deadline_millis),
        "created_millis": str(record.created_millis),
        "expires_millis": str(record.expires_millis),
    }


RUNNERS: dict[str, dict[str, Callable[[Case], None]]] = {
    "db_error.json": {"classify": db_error_classify},
    "api.json": {
        "fingerprint": api_case(api_fingerprint),
        "fingerprint_json": api_case(api_fingerprint_json),
        "fingerprint_bytes": api_case(
            lambda case: str(mintid.fingerprint_bytes(bytes.fromhex(case["raw"])))
        ),
        "issue_grant": api_case(api_issue_grant),
        "record_policy": api_case(
            api_policy(
                mintid.RecordPolicy,
                [
                    "lease_millis",
                    "retention_millis",
                    "store_errors",
                    "retry_after_millis",
                    "max_wait_millis",
                    "poll_millis",
                ],
            )
        ),
        "segment_policy": api_case(
            api_policy(
                mintid.SegmentPolicy,
                [
                    "initial_step",
                    "min_step",
                    "max_step",
                    "fetch_at_percent",
                    "grow_below_millis",
                    "shrink_above_millis",
                ],
            )
        ),
        "relay_policy": api_case(
            api_policy(
                mintid.RelayPolicy,
                [
                    "batch_size",
                    "claim_millis",
                    "base_backoff_millis",
                    "max_backoff_millis",
                    "jitter_percent",
                    "max_attempts",
                ],
            )
        ),
        "decide": api_case(api_decide),
        "lease_policy": api_case(
            api_policy(mintid.LeasePolicy, ["max_worker", "lease_millis", "renew_interval_millis"])
        ),
    },
    "id_buffer.json": {
        "fresh_until": id_buffer_fresh_until,
        "next_batch_size": id_buffer_next_batch_size,
        "batch_cap": id_buffer_batch_cap,
        "hand_out": id_buffer_hand_out,
    },
    "storable_text.json": {
        "storable_text": storable_text,
        "storable_utf8": storable_utf8,
        "storable_utf16": storable_utf16,
        "raised_text": storable_raised_text,
    },
    "snowflake.json": {
        "layout": snowflake_layout,
        "layout_invalid": snowflake_layout_invalid,
        "compose": snowflake_compose,
        "decode": snowflake_decode,
        "worker_id": snowflake_worker_id,
        "parse_decimal": snowflake_parse(mintid.snowflake_from_decimal),
        "parse_base32": snowflake_parse(mintid.snowflake_from_base32),
        "generate": snowflake_generate,
    },
    "uuid7.json": {
        "from_fields": uuid7_from_fields,
        "parse": uuid7_parse,
        "parse_uuid": uuid7_parse_uuid,
        "from_bytes": uuid7_from_bytes,
        "new_v8": uuid7_new_v8,
        "generate": uuid7_generate,
    },
    "http.json": {
        "default_kind": http_default_kind,
        "is_json_content_type": http_is_json_content_type,
        "fingerprint_body": http_fingerprint_body,
        "fingerprint_request": http_fingerprint_request,
        "problem_document": http_problem_document,
        "status_document": http_status_document,
        "grant_document": http_grant_document,
        "encode_envelope": http_encode_envelope,
        "decode_envelope": http_decode_envelope,
        "defaults": http_defaults,
    },
    "keys.json": {
        "new_key": keys_new_key,
        "id_from_fields": keys_id_from_fields,
        "derived_key": keys_derived_key,
        "parse_header": keys_parse_header,
        "parse_key_text": keys_parse_key_text,
    },
    "fingerprint.json": {
        "fingerprint_json": fingerprint_fingerprint_json,
        "fingerprint_bytes": fingerprint_fingerprint_bytes,
        "parse_fingerprint": fingerprint_parse_fingerprint,
    },
    "request_id.json": {
        "issue_grant": request_id_issue_grant,
        "parse_grant": request_id_parse_grant,
        "mint": request_id_mint,
        "verify": request_id_verify,
        "verify_unsigned": request_id_verify_unsigned,
        "key_ring": request_id_key_ring,
    },
    "record.json": {
        "sequence": record_sequence,
        "status": record_status,
        "policy": record_policy,
        "problem": record_problem,
        "retry_after_secs": record_retry_after_secs,
        "http_constants": record_http_constants,
    },
    "lease.json": {
        "policy": lease_policy,
        "acquire": lease_acquire,
        "none_found": lease_none_found,
        "guard": lease_guard,
    },
    "segment.json": {
        "policy": segment_policy,
        "adapt": segment_adapt,
        "allocator": segment_allocator,
    },
    "limits.json": {
        "argument": limits_argument,
        "bound": limits_bound,
        "histogram": limits_histogram,
    },
    "wire.json": {op: wire_vectors.run_case for op in ("spec", "input", "step")},
    "outbox.json": {
        "status": outbox_case(lambda case: str(mintid.OutboxStatus.parse(case["text"]))),
        "policy": outbox_case(outbox_policy),
        "backoff": outbox_case(
            lambda case: str(
                relay_policy_of(case["policy"]).backoff_millis(
                    int(case["attempts"]), int(case["draw"])
                )
            )
        ),
        "claim": outbox_case(outbox_claim),
        "delivery": outbox_case(
            lambda case: relay_policy_of(case["policy"]).delivery(int(case["attempts"]))
        ),
        "after_failure": outbox_case(outbox_after_failure),
        "enqueued": outbox_case(lambda case: mintid.outbox_enqueued(int(case["rows"]))),
        "marked": outbox_case(outbox_marked),
        "message": outbox_case(outbox_message),
    },
}


@pytest.mark.parametrize(("file", "case"), list(_cases()))
def test_vector(file: str, case: Case) -> None:
    assert file in RUNNERS, f"no runner for vector file {file}"
    runners = RUNNERS[file]
    assert case["op"] in runners, f"no runner for op {case['op']!r} in {file}"
    runners[case["op"]](case)


def test_every_vector_file_is_known() -> None:
    files = {path.name for path in VECTORS.glob("*.json")}
    assert files, f"no vectors in {VECTORS}"
    assert files == set(RUNNERS), files ^ set(RUNNERS)


def test_wire_tags_are_the_codec_s() -> None:
    document = json.loads((VECTORS / "wire.json").read_text(encoding="utf-8"))
    wire_vectors.check_tables(document)
