"""The conformance scenarios (tests/conformance/idempotency.json) use only the vocabulary
that tests/conformance/README.md defines, so every language's runner can execute them."""

import json
import pathlib
import re

import pytest

FILE = pathlib.Path(__file__).resolve().parents[1] / "conformance" / "idempotency.json"
CASES = json.loads(FILE.read_text())["cases"]

DECIMAL = re.compile(r"^(0|[1-9][0-9]*)$")
HEX32 = re.compile(r"^[0-9a-f]{64}$")
POLICY = {"lease_millis", "retention_millis", "store_errors", "retry_after_millis",
          "max_wait_millis", "poll_millis"}
DECISIONS = {"execute", "replay", "in_progress", "fingerprint_mismatch", "key_too_old"}
RECORD = {"status", "fingerprint", "token", "lease_deadline", "created", "expires", "response",
          "error"}
STEP_FIELDS = {
    "migrate": ({"expect"}, set()),
    "migrations": ({"expect"}, set()),
    "run": ({"way", "worker", "fingerprint", "operation", "expect"},
            {"now", "key", "key_created", "store", "in_forked_child", "lose_reply",
             "unavailable_after_operation"}),
    "claim": ({"worker", "fingerprint", "expect"}, {"now", "key", "key_created"}),
    "complete": ({"worker", "response", "expect"}, {"now", "lose_reply"}),
    "fail": ({"worker", "failure", "error", "expect"}, {"now", "lose_reply"}),
    "check": ({"expect"}, {"key"}),
    "side_effects": ({"expect"}, {"key"}),
    "records": ({"expect"}, set()),
    "cleanup": ({"now", "batch_size", "expect"}, set()),
    "concurrent": ({"way", "workers", "keys", "fingerprint", "operation", "expect"}, set()),
    "renew": ({"worker", "expect"}, {"now"}),
    "overlap": ({"first", "second_after_millis", "second", "expect"}, set()),
}
LOSE_REPLY = {"run": {"complete", "fail", "release"}, "complete": {"complete"},
              "fail": {"fail", "release"}}
OVERLAP_REQUEST = {"way", "worker", "fingerprint", "operation"}


def check_key(key):
    assert set(key) == {"scope", "kind", "id"}
    assert all(isinstance(part, str) and part for part in key.values())


def check_response(response):
    assert response["content_type"] and len(response) == 2
    (form, value), = [(k, v) for k, v in response.items() if k != "content_type"]
    assert form in {"text", "hex", "fill"}
    if form == "fill":
        assert set(value) == {"byte", "length"} and re.fullmatch("[0-9a-f]{2}", value["byte"])
        assert DECIMAL.match(value["length"])


def check_operation(operation):
    if operation["outcome"] == "succeed":
        assert {"outcome", "response"} <= set(operation) <= {
            "outcome", "response", "sleep_millis", "kill_connections", "outage_millis"}
        check_response(operation["response"])
        if "sleep_millis" in operation:
            assert DECIMAL.match(operation["sleep_millis"])
        if "outage_millis" in operation:
            assert DECIMAL.match(operation["outage_millis"])
        if "kill_connections" in operation:
            assert operation["kill_connections"] is True
    elif operation["outcome"] == "not_a_response":
        assert set(operation) == {"outcome"}
    else:
        assert operation["outcome"] == "fail"
        assert set(operation) == {"outcome", "failure", "error"}
        assert operation["failure"] in {"final", "retryable"}


def check_decision(expect, *, timed=False):
    if "decision" not in expect:
        assert set(expect) in ({"error", "problem"}, {"error"})
        return
    decision = expect["decision"]
    assert decision in DECISIONS
    allowed = {
        "execute": [{"decision", "response"}, {"decision", "error"},
                    {"decision", "error", "not_recorded"},
                    {"decision", "token", "lease_deadline"}],
        "replay": [{"decision", "outcome", "response"}, {"decision", "outcome", "error"}],
        "in_progress": [{"decision", "problem", "retry_after_millis"}]
        + ([{"decision", "problem"}] if timed else []),
        "fingerprint_mismatch": [{"decision", "problem"}],
        "key_too_old": [{"decision", "problem"}],
    }[decision]
    assert set(expect) in allowed, expect
    if "response" in expect:
        check_response(expect["response"])
    if "problem" in expect:
        assert expect["problem"] == decision
    if "not_recorded" in expect:
        assert expect["not_recorded"] is True


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_case_uses_the_documented_vocabulary(case):
    assert set(case) == {"name", "op", "policy", "clock", "key", "steps"}
    assert case["op"] == "scenario" and case["clock"] in {"manual", "system"}
    assert set(case["policy"]) == POLICY
    check_key(case["key"])
    assert case["steps"][0]["do"] == "migrate"
    for step in case["steps"]:
        required, optional = STEP_FIELDS[step["do"]]
        fields = set(step) - {"do"}
        assert required <= fields <= required | optional, step
        if case["clock"] == "manual" and step["do"] in {"run", "claim", "complete", "fail"}:
            assert DECIMAL.match(step["now"]), step
        for name in ("now", "key_created", "batch_size", "workers", "keys"):
            if name in step:
                assert DECIMAL.match(step[name]), step
        if "key" in step:
            check_key(step["key"])
        if "fingerprint" in step:
            assert HEX32.match(step["fingerprint"])
        if "operation" in step:
            check_operation(step["operation"])
        if step["do"] in {"run", "claim"}:
            check_decision(step["expect"])
        if step["do"] in {"run", "concurrent"}:
            assert step["way"] in {"run_once", "same_transaction"}
        if "store" in step:
            assert step["store"] in {"unavailable", "found_rows"}
        if "lose_reply" in step:
            assert step["lose_reply"] in LOSE_REPLY[step["do"]], step
        if "outage_millis" in step.get("operation", {}):
            assert case["clock"] == "system", "an outage runs on the system clock"
        if "unavailable_after_operation" in step:
            assert step["unavailable_after_operation"] is True
            assert step["expect"].get("not_recorded") is True
        if "in_forked_child" in step:
            assert step["in_forked_child"] is True
        if step["do"] == "renew":
            assert set(step["expect"]) in ({"lease_deadline"}, {"error"})
        if step["do"] == "overlap":
            assert case["clock"] == "system"
            assert DECIMAL.match(step["second_after_millis"])
            assert set(step["expect"]) == {"first", "second"}
            for part in ("first", "second"):
                assert set(step[part]) == OVERLAP_REQUEST
                assert step[part]["way"] == "run_once"
                check_operation(step[part]["operation"])
                check_decision(step["expect"][part], timed=True)
        if step["do"] in {"complete", "fail"}:
            assert step["expect"] == "ok" or set(step["expect"]) == {"error"}
        if step["do"] == "check" and step["expect"] is not None:
            assert set(step["expect"]) == RECORD
            assert HEX32.match(step["expect"]["fingerprint"])
        if step["do"] == "concurrent":
            assert set(step["expect"]) == {"executed", "side_effects_per_key", "others"}


def test_case_names_are_unique():
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names))


OUTBOX = json.loads((FILE.parent / "outbox.json").read_text())["cases"]
REPORT = {"sent", "retried", "dead", "given_up", "claim_lost", "released", "mark_failed"}
MARKS = {"outbox_mark_sent", "outbox_mark_retry", "outbox_mark_dead"}


def check_relay(step):
    assert {"relay", "now", "draw", "sends", "expect"} <= set(step) - {"do"} <= {
        "relay", "now", "draw", "sends", "expect", "lose_reply"}, step
    assert step.get("lose_reply", "outbox_mark_sent") in MARKS
    assert set(step["expect"]) == REPORT and all(DECIMAL.match(v) for v in step["expect"].values())
    for send in step["sends"]:
        assert {"message_id", "outcome", "millis"} <= set(send) <= {
            "message_id", "outcome", "millis", "during", "mark_fails"}, send
        assert send.get("mark_fails", "other") == "other"
        for inner in send.get("during", []):
            if inner["do"] == "relay":
                check_relay(inner)


@pytest.mark.parametrize("case", OUTBOX, ids=[case["name"] for case in OUTBOX])
def test_outbox_relays_use_the_documented_vocabulary(case):
    for step in case["steps"]:
        if step["do"] == "relay":
            check_relay(step)
