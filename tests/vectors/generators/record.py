"""Independent model of docs/spec.md's record section (expected values written by hand from its rules); writes tests/vectors/record.json."""
import json, sys

FA = "aa" * 32
FB = "bb" * 32

def pol(lease, retention, store_errors=True, retry_after=1000, max_wait=0, poll=50):
    return {"lease_millis": str(lease), "retention_millis": str(retention),
            "store_errors": store_errors, "retry_after_millis": str(retry_after),
            "max_wait_millis": str(max_wait), "poll_millis": str(poll)}

P = pol(1000, 100000)  # lease 1 s, retention 100 s

LAST_NOW = {}

def decide(worker, now, fp=FA, key_created=None, waited=None, **expect):
    LAST_NOW[worker] = now
    s = {"do": "decide", "worker": worker, "now": str(now), "fingerprint": fp}
    if key_created is not None:
        s["key_created"] = str(key_created)
    if waited is not None:
        s["waited"] = str(waited)
    s["expect"] = expect
    return s

def execute(token, deadline, created, expires, replaces=None):
    e = {"decision": "execute", "token": str(token), "lease_deadline": str(deadline),
         "created": str(created), "expires": str(expires)}
    e["replaces"] = None if replaces is None else {
        "token": str(replaces[0]), "created": str(replaces[1]), "status": replaces[2]}
    return e

def claim(worker, error=None, now=None):
    # Written at the time of the worker's latest decision unless given.
    now = LAST_NOW[worker] if now is None else now
    return {"do": "claim", "worker": worker, "now": str(now),
            "expect": "ok" if error is None else {"error": error}}

def complete(worker, error=None):
    return {"do": "complete", "worker": worker, "expect": "ok" if error is None else {"error": error}}

def fail(worker, failure, error=None):
    return {"do": "fail", "worker": worker, "failure": failure,
            "expect": "ok" if error is None else {"error": error}}

def record(status, token, deadline, created, expires, fp=FA):
    return {"status": status, "fingerprint": fp, "token": str(token), "lease_deadline": str(deadline),
            "created": str(created), "expires": str(expires)}

def check(rec):
    return {"do": "check", "expect": rec}

def store(rec):
    return {"do": "store", "record": rec}

def cleanup(now, removed):
    return {"do": "cleanup", "now": str(now), "expect": "removed" if removed else "kept"}

REPLAY_OK = {"decision": "replay", "outcome": "succeeded"}
REPLAY_FAILED = {"decision": "replay", "outcome": "failed"}
MISMATCH = {"decision": "fingerprint_mismatch", "problem": "fingerprint_mismatch"}
TOO_OLD = {"decision": "key_too_old", "problem": "key_too_old"}

def in_progress(ms, secs):
    return {"decision": "in_progress", "retry_after_millis": str(ms), "retry_after_secs": str(secs),
            "problem": "in_progress"}

def wait(ms):
    return {"decision": "wait", "poll_millis": str(ms)}

cases = []
def seq(name, steps, policy=P):
    cases.append({"name": name, "op": "sequence", "policy": policy, "steps": steps})

seq("first request runs, a duplicate replays the stored response", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    check(record("pending", 1, 2000, 1000, 101000)),
    complete("a"),
    check(record("succeeded", 1, 2000, 1000, 101000)),
    decide("b", 1500, **REPLAY_OK),
    decide("c", 99999, **REPLAY_OK),
])
seq("a duplicate during the lease is in progress, retry hint capped by the lease left", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    decide("b", 1000, **in_progress(1000, 1)),
    decide("b", 1600, **in_progress(400, 1)),
    decide("b", 1999, **in_progress(1, 1)),
])
seq("a long retry hint becomes whole Retry-After seconds, rounded up", [
    decide("a", 0, **execute(1, 10000, 0, 100000)),
    claim("a"),
    decide("b", 0, **in_progress(2500, 3)),
    decide("b", 8000, **in_progress(2000, 2)),
], policy=pol(10000, 100000, retry_after=2500))
seq("a waiting duplicate polls until its wait budget is spent, then is told in progress", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    decide("b", 1000, waited=0, **wait(100)),
    decide("b", 1100, waited=100, **wait(100)),
    decide("b", 1250, waited=250, **wait(50)),
    decide("b", 1300, waited=300, **in_progress(700, 1)),
    decide("c", 1970, waited=0, **wait(30)),
], policy=pol(1000, 100000, max_wait=300, poll=100))
seq("a waiting duplicate replays once the first request completes", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    decide("b", 1000, waited=0, **wait(100)),
    complete("a"),
    decide("b", 1100, waited=100, **REPLAY_OK),
], policy=pol(1000, 100000, max_wait=300, poll=100))
seq("the same key with another payload is a fingerprint mismatch, pending or done", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    decide("b", 1100, fp=FB, **MISMATCH),
    complete("a"),
    decide("b", 1200, fp=FB, **MISMATCH),
])
seq("an expired lease is reclaimed with the next token; the old holder's late write is rejected", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    decide("b", 2000, **execute(2, 3000, 1000, 101000, replaces=(1, 1000, "pending"))),
    claim("b"),
    check(record("pending", 2, 3000, 1000, 101000)),
    complete("a", error="record.stale_token"),
    fail("a", "final", error="record.stale_token"),
    complete("b"),
    check(record("succeeded", 2, 3000, 1000, 101000)),
    decide("c", 3500, **REPLAY_OK),
])
seq("a late write after the lease passed but before any reclaim is accepted", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    complete("a"),
    check(record("succeeded", 1, 2000, 1000, 101000)),
    decide("b", 5000, **REPLAY_OK),
])
seq("a late write that lands between a reclaim decision and its claim wins; the reclaim conflicts", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    decide("b", 2500, **execute(2, 3500, 1000, 101000, replaces=(1, 1000, "pending"))),
    complete("a"),
    claim("b", error="record.claim_conflict"),
    check(record("succeeded", 1, 2000, 1000, 101000)),
    decide("b", 2501, **REPLAY_OK),
])
seq("two reclaimers race: one claim wins, the other conflicts and then sees in progress", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    decide("b", 2100, **execute(2, 3100, 1000, 101000, replaces=(1, 1000, "pending"))),
    decide("c", 2200, **execute(2, 3200, 1000, 101000, replaces=(1, 1000, "pending"))),
    claim("b"),
    claim("c", error="record.claim_conflict"),
    decide("c", 2300, **in_progress(800, 1)),
])
seq("two first requests race: one insert wins, the other conflicts", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    decide("b", 1001, **execute(1, 2001, 1001, 101001)),
    claim("a"),
    claim("b", error="record.claim_conflict"),
    decide("b", 1002, **in_progress(998, 1)),
])
seq("a claim is written only while its own lease runs", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a", now=2000, error="record.claim_expired"),
    claim("a", now=1999),
    check(record("pending", 1, 2000, 1000, 101000)),
])
seq("a claim decided before its record was removed cannot bring it back", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    decide("b", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    cleanup(101000, True),
    claim("b", now=101000, error="record.claim_expired"),
    check(None),
])
seq("a lease is over exactly at its deadline", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    decide("b", 1999, **in_progress(1, 1)),
    decide("b", 2000, **execute(2, 3000, 1000, 101000, replaces=(1, 1000, "pending"))),
])
seq("a retryable failure releases the key: the next request runs with the next token", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    fail("a", "retryable"),
    check(record("failed_retryable", 1, 2000, 1000, 101000)),
    decide("b", 1200, **execute(2, 2200, 1000, 101000, replaces=(1, 1000, "failed_retryable"))),
    claim("b"),
    complete("a", error="record.stale_token"),
    complete("b"),
    decide("c", 1300, **REPLAY_OK),
])
seq("a final failure is stored and replayed", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    fail("a", "final"),
    check(record("failed", 1, 2000, 1000, 101000)),
    decide("b", 1100, **REPLAY_FAILED),
    decide("b", 1200, fp=FB, **MISMATCH),
])
seq("without stored errors a final failure releases the key", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    fail("a", "final"),
    check(record("failed_retryable", 1, 2000, 1000, 101000)),
    decide("b", 1100, **execute(2, 2100, 1000, 101000, replaces=(1, 1000, "failed_retryable"))),
], policy=pol(1000, 100000, store_errors=False))
seq("a claim ends once: a second complete or fail by its holder is refused", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    complete("a"),
    complete("a", error="record.not_pending"),
    fail("a", "retryable", error="record.not_pending"),
    check(record("succeeded", 1, 2000, 1000, 101000)),
])
seq("a key whose creation time is a retention old is too old, even with no record", [
    decide("a", 100999, key_created=1000, **execute(1, 101999, 100999, 200999)),
    decide("a", 101000, key_created=1000, **TOO_OLD),
    decide("a", 500000, key_created=1000, **TOO_OLD),
])
seq("retention counts from the later of the key's creation and the first claim", [
    decide("a", 1000, key_created=400, **execute(1, 2000, 1000, 101000)),
    decide("b", 1000, key_created=1300, **execute(1, 2000, 1000, 101300)),
])
seq("a key too old is refused before its fingerprint is compared", [
    decide("a", 1000, key_created=900, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    complete("a"),
    decide("b", 100899, fp=FB, key_created=900, **MISMATCH),
    decide("b", 100900, fp=FB, key_created=900, **TOO_OLD),
])
seq("a stored record past its expiry shows the key is too old, whatever its status", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    decide("b", 100999, **execute(2, 101999, 1000, 101000, replaces=(1, 1000, "pending"))),
    decide("b", 101000, **TOO_OLD),
    decide("b", 101000, fp=FB, **TOO_OLD),
    complete("a"),
    decide("b", 100999, **REPLAY_OK),
    decide("b", 101000, **TOO_OLD),
])
seq("cleanup removes an expired record only once no lease is running", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    cleanup(100999, False),
    decide("b", 100500, **execute(2, 101500, 1000, 101000, replaces=(1, 1000, "pending"))),
    claim("b"),
    cleanup(101000, False),
    cleanup(101499, False),
    cleanup(101500, True),
    check(None),
])
seq("a holder of a removed record cannot complete the key's next record", [
    decide("a", 1000, **execute(1, 2000, 1000, 101000)),
    claim("a"),
    cleanup(101000, True),
    decide("c", 200000, **execute(1, 201000, 200000, 300000)),
    claim("c"),
    complete("a", error="record.stale_token"),
    check(record("pending", 1, 201000, 200000, 300000)),
    complete("c"),
])
seq("a time past 64 bits is refused, never wrapped", [
    decide("a", 18446744073709551000, **{"error": "record.time_overflow"}),
    decide("a", 2**64 - 1 - 1000000, **execute(1, 2**64 - 1 - 999000, 2**64 - 1 - 1000000, 2**64 - 1)),
    decide("b", 2**64 - 1 - 999999, **{"error": "record.time_overflow"}),
], policy=pol(1000, 1000000))
seq("a fencing token at its maximum cannot be bumped", [
    store(record("failed_retryable", 18446744073709551615, 2000, 1000, 101000)),
    decide("a", 1500, **{"error": "record.token_exhausted"}),
    store(record("failed_retryable", 18446744073709551614, 2000, 1000, 101000)),
    decide("a", 1500, **execute(18446744073709551615, 2500, 1000, 101000,
                                replaces=(18446744073709551614, 1000, "failed_retryable"))),
])

for text in ["pending", "succeeded", "failed", "failed_retryable"]:
    cases.append({"name": f"status {text}", "op": "status", "text": text, "expect": text})
for text in ["", "PENDING", "done", "failed "]:
    cases.append({"name": f"status {text!r} is unknown", "op": "status", "text": text,
                  "error": "record.unknown_status"})

def policy_case(name, policy, error=None):
    c = {"name": name, "op": "policy", "policy": policy}
    if error:
        c["error"] = error
    else:
        c["expect"] = "ok"
    cases.append(c)
policy_case("the default policy", pol(60000, 86400000))
policy_case("a zero lease", pol(0, 1000), "record.invalid_policy")
policy_case("retention no longer than the lease", pol(1000, 1000), "record.invalid_policy")
policy_case("a zero retry hint", pol(1000, 2000, retry_after=0), "record.invalid_policy")
policy_case("waiting without a poll interval", pol(1000, 2000, max_wait=10, poll=0), "record.invalid_policy")
policy_case("no waiting and no poll interval", pol(1000, 2000, max_wait=0, poll=0))

PROBLEMS = [
    ("missing_key", 400, "Idempotency key missing"),
    ("malformed_key", 400, "Idempotency key malformed"),
    ("invalid_request_id", 400, "Request ID not valid"),
    ("grant_expired", 400, "Request ID grant expired"),
    ("in_progress", 409, "Request already in progress"),
    ("fingerprint_mismatch", 422, "Idempotency key reused with a different payload"),
    ("key_too_old", 400, "Idempotency key older than retention"),
    ("storage_unavailable", 503, "Idempotency storage unavailable"),
    ("malformed_body", 400, "Request body malformed"),
]
for name, status, title in PROBLEMS:
    cases.append({"name": f"problem {name}", "op": "problem", "problem": name, "status": status,
                  "type": "https://mintid.dev/problems/" + name.replace("_", "-"), "title": title})
for millis, secs in [(0, 1), (1, 1), (999, 1), (1000, 1), (1001, 2), (60000, 60),
                     (18446744073709551615, 18446744073709552)]:
    cases.append({"name": f"retry after {millis} ms", "op": "retry_after_secs",
                  "millis": str(millis), "expect": str(secs)})
cases.append({"name": "http header names and values", "op": "http_constants",
              "problem_content_type": "application/problem+json",
              "replayed_header": "Idempotent-Replayed", "replayed_value": "true",
              "retry_after_header": "Retry-After"})

names = [c["name"] for c in cases]
assert len(names) == len(set(names)), "duplicate names"
doc = {"description": "The idempotency record state machine: event sequences with the expected "
       "decision or error at each step, status texts, policy checks and the HTTP mapping. "
       "See tests/vectors/README.md, section record.", "cases": cases}
json.dump(doc, sys.stdout, indent=1, ensure_ascii=False)
sys.stdout.write("\n")
