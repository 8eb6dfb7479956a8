"""Independent model of the public calls that docs/spec.md's glossary names, writes tests/vectors/api.json.

Every host's runner makes these calls through its public API (not the core's): the same call
with the same argument gives the same result in every language. Fingerprints come from Python's
hashlib over canonical JSON written by json.dumps with sorted keys, which is RFC 8785 for the
documents used here (ASCII member names, integers, strings, booleans, null); grants from hmac.
"""
import base64, hashlib, hmac, json, sys

def b64(data): return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
def canonical(value): return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
def fp_json(value): return "sha256:" + b64(hashlib.sha256(canonical(value).encode()).digest())
def fp_raw(raw): return "sha256:" + b64(hashlib.sha256(b"\x00" + raw).digest())

SECRET = bytes(range(32))
EXP = 1_700_000_000_000

def grant(key_id, expires, scope):
    info = b"mintid-grant-v1" + key_id.to_bytes(4, "big") + expires.to_bytes(6, "big") + scope.encode()
    key = hmac.new(SECRET, info, hashlib.sha256).digest()
    return b64(bytes([0x02]) + key_id.to_bytes(4, "big") + expires.to_bytes(6, "big") + key), key

cases = []
def add(name, call, **fields):
    cases.append({"name": name, "op": call, **fields})

ORDER = {"b": [1, 2], "a": "x", "n": None, "t": True}
# fingerprint(value): a parsed value, written as JSON by the host.
add("a map is fingerprinted as its JSON document", "fingerprint", value=ORDER, expect=fp_json(ORDER))
add("a list", "fingerprint", value=[3, "three", False], expect=fp_json([3, "three", False]))
add("a number", "fingerprint", value=42, expect=fp_json(42))
add("null", "fingerprint", value=None, expect=fp_json(None))
add("exclude drops a member", "fingerprint", value={"a": 1, "sent_at": 5}, exclude=["/sent_at"],
    expect=fp_json({"a": 1}))
add("include keeps only a member", "fingerprint", value={"a": 1, "b": {"c": 2}}, include=["/b"],
    expect=fp_json({"/b": {"c": 2}}))
add("a string is never read as JSON text", "fingerprint", value='{"a":1}',
    error="fingerprint.string_value")
add("a plain string value is refused too", "fingerprint", value="hello",
    error="fingerprint.string_value")
add("bytes are no parsed value", "fingerprint", value_bytes=b'{"a":1}'.hex(),
    error="fingerprint.invalid_json")
# fingerprint_json(text): JSON text, as a string or its UTF-8 bytes.
TEXT = '{ "t": true, "n": null, "b": [1, 2.0], "a": "x" }'
add("JSON text is parsed and canonicalised", "fingerprint_json", text=TEXT, expect=fp_json(ORDER))
add("JSON text as UTF-8 bytes", "fingerprint_json", text_bytes=TEXT.encode().hex(), expect=fp_json(ORDER))
add("a JSON string document", "fingerprint_json", text='"hello"', expect=fp_json("hello"))
add("JSON text with a selection", "fingerprint_json", text='{"a":1,"sent_at":5}', exclude=["/sent_at"],
    expect=fp_json({"a": 1}))
add("text that is not JSON", "fingerprint_json", text="{", error="fingerprint.invalid_json")
add("bytes that are not UTF-8", "fingerprint_json", text_bytes="7b22ff227d", error="fingerprint.invalid_utf8")
# fingerprint_bytes(raw): a raw body, never parsed.
add("a raw body is hashed as it is", "fingerprint_bytes", raw=b'{"a":1}'.hex(), expect=fp_raw(b'{"a":1}'))
add("an empty raw body", "fingerprint_bytes", raw="", expect=fp_raw(b""))

# KeyRing(1, secret).issue_grant(scope, expires_millis) returns a Grant in every host.
for name, scope in [("a grant", "user:42"), ("a grant for a 64-byte scope, the longest a key's scope may be", "s" * 64)]:
    text, key = grant(1, EXP, scope)
    add(name, "issue_grant", key_id=1, secret=SECRET.hex(), scope=scope, expires_millis=str(EXP),
        expect={"text": text, "key_id": 1, "expires_millis": str(EXP), "grant_key": key.hex()})
add("a grant scope longer than a key scope", "issue_grant", key_id=1, secret=SECRET.hex(), scope="s" * 65,
    expires_millis=str(EXP), error="request_id.invalid_scope")
add("an empty grant scope", "issue_grant", key_id=1, secret=SECRET.hex(), scope="",
    expires_millis=str(EXP), error="request_id.invalid_scope")

# Policies built with nothing given hold the core's defaults in every host; each value is optional.
add("record policy defaults", "record_policy", args={}, expect={
    "lease_millis": "60000", "retention_millis": "86400000", "store_errors": True,
    "retry_after_millis": "1000", "max_wait_millis": "0", "poll_millis": "50"})
add("record policy with one value set", "record_policy", args={"retention_millis": "3600000"}, expect={
    "lease_millis": "60000", "retention_millis": "3600000", "store_errors": True,
    "retry_after_millis": "1000", "max_wait_millis": "0", "poll_millis": "50"})
add("record policy with a lease longer than its retention", "record_policy",
    args={"lease_millis": "7200000", "retention_millis": "3600000"}, error="record.invalid_policy")
add("segment policy defaults", "segment_policy", args={}, expect={
    "initial_step": "1000", "min_step": "100", "max_step": "1000000", "fetch_at_percent": 10,
    "grow_below_millis": "900000", "shrink_above_millis": "1800000"})
add("segment policy with one value set", "segment_policy", args={"max_step": "5000"}, expect={
    "initial_step": "1000", "min_step": "100", "max_step": "5000", "fetch_at_percent": 10,
    "grow_below_millis": "900000", "shrink_above_millis": "1800000"})
add("segment policy with a first step below its smallest", "segment_policy",
    args={"initial_step": "50"}, error="segment.invalid_policy")
add("relay policy defaults", "relay_policy", args={}, expect={
    "batch_size": "100", "claim_millis": "60000", "base_backoff_millis": "1000",
    "max_backoff_millis": "600000", "jitter_percent": 50, "max_attempts": "10"})
add("relay policy with one value set", "relay_policy", args={"batch_size": "10"}, expect={
    "batch_size": "10", "claim_millis": "60000", "base_backoff_millis": "1000",
    "max_backoff_millis": "600000", "jitter_percent": 50, "max_attempts": "10"})
add("relay policy with an empty batch", "relay_policy", args={"batch_size": "0"}, error="outbox.invalid_policy")
add("lease policy defaults", "lease_policy", args={}, expect={
    "max_worker": "1023", "lease_millis": "30000", "renew_interval_millis": "10000"})

# decide(existing, incoming, now_millis, policy): the same argument order in every host.
FP = fp_json({"a": 1})
add("decide with no record executes", "decide", existing=None, fingerprint=FP, now_millis="5000",
    args={"lease_millis": "1000"}, expect={
        "decision": "execute", "token": "1", "lease_deadline_millis": "6000", "created_millis": "5000",
        "expires_millis": str(5000 + 86_400_000)})
add("decide with a finished record replays", "decide", fingerprint=FP, now_millis="5000", args={},
    existing={"status": "succeeded", "fingerprint": FP, "token": "1", "lease_deadline_millis": "2000",
              "created_millis": "1000", "expires_millis": "86401000"},
    expect={"decision": "replay"})
add("decide with another payload's record refuses", "decide", fingerprint=fp_json({"a": 2}), now_millis="5000",
    args={}, existing={"status": "succeeded", "fingerprint": FP, "token": "1", "lease_deadline_millis": "2000",
                       "created_millis": "1000", "expires_millis": "86401000"},
    expect={"decision": "fingerprint_mismatch"})

names = [case["name"] for case in cases]
assert len(names) == len(set(names))
DESCRIPTION = ("Public calls of every host, made through each language's own API: the same call with "
               "the same argument gives the same result (or error code) in Rust, Python, Kotlin and JS.")
json.dump({"description": DESCRIPTION, "cases": cases}, sys.stdout, indent=1, ensure_ascii=False)
sys.stdout.write("\n")
