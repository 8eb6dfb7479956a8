# Independent model of docs/spec.md's "The wire"; prints tests/vectors/wire.json.
# The wire is the one packed crossing of every store driver: a spec makes a driver, an input
# pushes what the host's database (or Redis, or the operation) said, a step says what to do
# next. Little-endian throughout; u8 tags; every count and length is a u32; a text is UTF-8.
# Every case holds the bytes (hex) beside what they mean; a runner decodes the hex to the
# meaning and encodes the meaning back to the same hex. In a meaning, u64 and i64 numbers are
# decimal strings (64-bit integers never pass through a JSON number), u8 and u32 numbers are
# JSON numbers, bytes are hex, and an absent optional is null.
import json
import struct

VERSION = 1
DIALECTS = ["postgres", "mysql", "sqlite"]
PLACEHOLDERS = ["question", "numbered", "format"]
KINDS = {
    "record": 1,
    "relay": 2,
    "record_renewal": 3,
    "record_cleanup": 4,
    "outbox_cleanup": 5,
    "record_load": 6,
    "outbox_load": 7,
    "enqueue": 8,
    "migrations": 9,
    "heartbeat": 10,
    "segment": 11,
    "lease_acquire": 12,
    "lease_renew": 13,
    "lease_release": 14,
}
WAYS = ["run_once", "same_transaction", "lease"]
INPUTS = {
    "start": 1,
    "rows": 2,
    "affected": 3,
    "failed": 4,
    "resume": 5,
    "finish": 6,
    "sent": 7,
    "send_failed": 8,
    "redis": 9,
    "report": 10,
    "stop": 11,
    "take": 12,
    "fetch": 13,
    "abandon": 14,
    "forked": 15,
    "mark": 16,
}
STEPS = {
    "run": 1,
    "pause": 2,
    "yield": 3,
    "done": 4,
    "fail": 5,
    "redis": 6,
    "begin": 7,
    "commit": 8,
    "rollback": 9,
    "report": 10,
    "taken": 11,
}
VALUES = ["null", "int", "text", "bytes"]
CLASSES = [
    "unique_violation",
    "serialization",
    "connection_lost",
    "constraint",
    "other",
    "schema_missing",
]
OUTCOMES = ["succeeded", "failed", "not_a_response", "raised"]
ANSWERS = ["nil", "fields", "failed", "noscript"]
FINISHED = [
    "executed",
    "operation_failed",
    "replay",
    "in_progress",
    "fingerprint_mismatch",
    "key_too_old",
    "operation_failed_unrecorded",
]
ENQUEUED = ["new", "already_enqueued"]
ACTIONS = ["hand_out", "fetch_beside", "fetch_now", "wait"]


def u8(n):
    return struct.pack("<B", n)


def u32(n):
    return struct.pack("<I", n)


def u64(text):
    return struct.pack("<Q", int(text))


def i64(text):
    return struct.pack("<q", int(text))


def flag(value):
    return u8(1 if value else 0)


def raw(data):
    return u32(len(data)) + data


def text(value):
    return raw(value.encode("utf-8"))


def hexed(value):
    return raw(bytes.fromhex(value))


def optional(value, encode):
    return u8(0) if value is None else u8(1) + encode(value)


def items(values, encode):
    return u32(len(values)) + b"".join(encode(v) for v in values)


def value(v):
    kind = v["type"]
    head = u8(VALUES.index(kind))
    if kind == "null":
        return head
    if kind == "int":
        return head + i64(v["value"])
    if kind == "text":
        return head + text(v["value"])
    return head + hexed(v["value"])


def manifest(m):
    return u8(DIALECTS.index(m["dialect"])) + u8(PLACEHOLDERS.index(m["placeholder"]))


def record_policy(p):
    return (
        u64(p["lease_millis"])
        + u64(p["retention_millis"])
        + flag(p["store_errors"])
        + u64(p["retry_after_millis"])
        + u64(p["max_wait_millis"])
        + u64(p["poll_millis"])
    )


def relay_policy(p):
    return (
        u64(p["batch_size"])
        + u64(p["claim_millis"])
        + u64(p["base_backoff_millis"])
        + u64(p["max_backoff_millis"])
        + u8(p["jitter_percent"])
        + u64(p["max_attempts"])
    )


def segment_policy(p):
    return (
        u64(p["initial_step"])
        + u64(p["min_step"])
        + u64(p["max_step"])
        + u8(p["fetch_at_percent"])
        + u64(p["grow_below_millis"])
        + u64(p["shrink_above_millis"])
    )


LAYOUT_BITS = ["time_bits", "worker_bits", "sequence_bits", "datacenter_bits"]
LEASE_NUMBERS = [
    "epoch_millis",
    "tick_millis",
    "lease_millis",
    "renew_interval_millis",
    "safety_margin_millis",
    "renew_retry_millis",
    "max_skew_millis",
    "max_start_wait_millis",
]


def lease_policy(p):
    return b"".join(u8(p[name]) for name in LAYOUT_BITS) + b"".join(
        u64(p[name]) for name in LEASE_NUMBERS
    )


def key(k):
    return text(k["kind"]) + text(k["scope"]) + text(k["id"])


def response(r):
    return text(r["content_type"]) + hexed(r["body"])


def spec(m):
    out = u8(KINDS[m["kind"]]) + manifest(m)
    kind = m["kind"]
    if kind == "record":
        out += record_policy(m["policy"]) + u8(WAYS.index(m["way"]))
        out += optional(m["fast"], lambda f: optional(f["ttl_millis"], u64))
        out += key(m["key"]) + bytes.fromhex(m["digest"])
        out += optional(m["key_created_millis"], u64)
    elif kind == "relay":
        out += relay_policy(m["policy"]) + u64(m["seed"])
    elif kind == "record_renewal":
        out += record_policy(m["policy"]) + key(m["key"])
        out += u64(m["token"]) + u64(m["created_millis"]) + u64(m["lease_deadline_millis"])
    elif kind == "record_cleanup":
        out += u64(m["batch_size"])
    elif kind == "outbox_cleanup":
        out += u64(m["sent_before_millis"]) + u64(m["batch_size"])
    elif kind == "record_load":
        out += key(m["key"])
    elif kind == "outbox_load":
        out += text(m["message_kind"]) + text(m["business_key"])
    elif kind == "enqueue":
        out += u64(m["message_id"]) + text(m["message_kind"]) + text(m["business_key"])
        out += hexed(m["payload"])
    elif kind == "migrations":
        out += flag(m["pending"])
    elif kind == "heartbeat":
        out += record_policy(m["policy"]) + key(m["key"])
        out += u64(m["token"]) + u64(m["created_millis"]) + u64(m["lease_deadline_millis"])
        out += optional(m["renew_every_millis"], u64)
    elif kind == "segment":
        out += text(m["tag"]) + segment_policy(m["policy"])
    elif kind == "lease_acquire":
        out += lease_policy(m["policy"]) + text(m["owner"])
        out += optional(m["timeout_millis"], u64)
    elif kind in ("lease_renew", "lease_release"):
        out += u64(m["guard"])
    return out


def outcome(o):
    kind = o["outcome"]
    out = u8(OUTCOMES.index(kind))
    if kind == "succeeded":
        return out + response(o["response"])
    if kind == "failed":
        return out + flag(o["retryable"]) + text(o["message"]) + optional(o["response"], response)
    if kind == "not_a_response":
        return out + text(o["type_name"])
    return out + text(o["type_name"]) + text(o["message"])


def redis_answer(a):
    kind = a["answer"]
    out = u8(ANSWERS.index(kind))
    if kind == "fields":
        return out + items(a["fields"], lambda f: optional(f, hexed))
    if kind == "failed":
        return out + text(a["message"])
    return out


def input_(m):
    tag = m["tag"]
    out = u8(INPUTS[tag]) + u64(m["now_millis"])
    if tag == "rows":
        out += items(m["rows"], lambda row: items(row, value))
    elif tag == "affected":
        out += u64(m["count"])
    elif tag == "failed":
        out += u8(CLASSES.index(m["class"])) + text(m["message"])
    elif tag == "finish":
        out += outcome(m["outcome"])
    elif tag == "send_failed":
        out += text(m["error"])
    elif tag == "redis":
        out += redis_answer(m["answer"])
    elif tag == "mark":
        out += u64(m["high_water_millis"])
    return out


def record_done(m):
    finished = m["finished"]
    out = text(m["decision"]) + u8(FINISHED.index(finished))
    if finished == "operation_failed":
        out += flag(m["stored"])
    elif finished == "replay":
        out += u8(0 if m["outcome"] == "succeeded" else 1)
        out += optional(m["response"], response) + optional(m["error"], text)
    elif finished == "in_progress":
        out += u64(m["retry_after_millis"])
    elif finished == "operation_failed_unrecorded":
        out += text(m["store_code"]) + text(m["store_message"])
    return out


def stored_record(r):
    return (
        text(r["status"])
        + bytes.fromhex(r["fingerprint"])
        + u64(r["token"])
        + u64(r["lease_deadline_millis"])
        + u64(r["created_millis"])
        + u64(r["expires_millis"])
        + optional(r["response"], response)
        + optional(r["error"], text)
    )


def stored_message(s):
    return (
        u64(s["message_id"])
        + text(s["message_kind"])
        + text(s["business_key"])
        + hexed(s["payload"])
        + text(s["status"])
        + u64(s["attempts"])
        + u64(s["next_attempt_millis"])
        + optional(s["last_error"], text)
        + u64(s["created_millis"])
        + u64(s["updated_millis"])
    )


RELAY_COUNTS = ["sent", "retried", "dead", "given_up", "claim_lost", "released", "mark_failed"]


ACQUIRED = [
    "worker_id",
    "fencing_token",
    "lease_deadline_millis",
    "start_after_millis",
    "ready_at_millis",
    "acquired_millis",
    "high_water_millis",
    "expected_token",
]


def kind_yield(kind, m):
    if kind == "segment":  # the answer to abandon and forked: nothing
        return b""
    if kind == "record":
        return (
            text(m["decision"])
            + u64(m["token"])
            + u64(m["created_millis"])
            + u64(m["lease_deadline_millis"])
            + optional(m["renew_every_millis"], u64)
        )
    if kind == "migrations":  # a statement to execute
        return u32(m["version"]) + text(m["sql"])
    if kind == "heartbeat":  # a pause, and the deadline as last renewed
        return u64(m["millis"]) + u64(m["lease_deadline_millis"])
    # relay: a message to send
    return (
        u64(m["message_id"])
        + text(m["message_kind"])
        + text(m["business_key"])
        + hexed(m["payload"])
        + u64(m["attempts"])
        + u64(m["created_millis"])
    )


def kind_done(kind, m):
    if kind == "record":
        return record_done(m)
    if kind == "relay":
        return b"".join(u64(m[name]) for name in RELAY_COUNTS)
    if kind in ("record_renewal", "heartbeat", "lease_renew"):
        return u64(m["lease_deadline_millis"])
    if kind == "segment":
        return u64(m["max_id"]) + u64(m["step"])
    if kind == "lease_acquire":
        return b"".join(u64(m[name]) for name in ACQUIRED)
    if kind == "lease_release":
        return flag(m["released"])
    if kind == "migrations":
        return items(m["versions"], u32)
    if kind in ("record_cleanup", "outbox_cleanup"):
        return u64(m["deleted"])
    if kind == "record_load":
        return optional(m["record"], stored_record)
    if kind == "outbox_load":
        return optional(m["message"], stored_message)
    return u8(ENQUEUED.index(m["enqueued"]))


def step(kind, m):
    tag = m["tag"]
    out = u8(STEPS[tag])
    if tag == "run":
        return out + text(m["name"]) + items(m["params"], value)
    if tag == "pause":
        return out + u64(m["millis"])
    if tag == "yield":
        return out + kind_yield(kind, m)
    if tag == "done":
        return out + kind_done(kind, m)
    if tag == "fail":
        return (
            out
            + text(m["code"])
            + text(m["detail"])
            + optional(m["part"], text)
            + optional(m["position"], u64)
            + optional(m["problem"], text)
            + text(m["concern"])
        )
    if tag == "redis":
        return (
            out
            + flag(m["eval"])
            + text(m["script"])
            + text(m["code"])
            + items(m["keys"], text)
            + items(m["args"], hexed)
        )
    if tag == "begin":
        return out + flag(m["write"])
    if tag == "report":
        return out + optional(m["lookup"], text) + u32(m["write_failures"])
    if tag == "taken":
        return (
            out
            + u64(m["first"])
            + u64(m["count"])
            + u8(ACTIONS.index(m["action"]))
            + u64(m["wait_millis"])
        )
    return out  # commit, rollback


# --- the cases -------------------------------------------------------------------------------

PG = {"dialect": "postgres", "placeholder": "numbered"}
MY = {"dialect": "mysql", "placeholder": "question"}
LITE = {"dialect": "sqlite", "placeholder": "question"}
PSYCOPG = {"dialect": "postgres", "placeholder": "format"}
POLICY = {
    "lease_millis": "60000",
    "retention_millis": "86400000",
    "store_errors": True,
    "retry_after_millis": "1000",
    "max_wait_millis": "0",
    "poll_millis": "50",
}
WAITING = dict(POLICY, store_errors=False, max_wait_millis="2000", poll_millis="25")
KEY = {"kind": "order.create", "scope": "tenant-1", "id": "abc"}
DIGEST = "07" * 32
RELAY_POLICY = {
    "batch_size": "100",
    "claim_millis": "30000",
    "base_backoff_millis": "1000",
    "max_backoff_millis": "300000",
    "jitter_percent": 20,
    "max_attempts": "10",
}
SEGMENT_POLICY = {
    "initial_step": "1000",
    "min_step": "100",
    "max_step": "1000000",
    "fetch_at_percent": 10,
    "grow_below_millis": "900000",
    "shrink_above_millis": "1800000",
}
# The classic layout (41 + 10 + 12 bits, Twitter's epoch) and the default lease timings.
LEASE_POLICY = {
    "time_bits": 41,
    "worker_bits": 10,
    "sequence_bits": 12,
    "datacenter_bits": 0,
    "epoch_millis": "1288834974657",
    "tick_millis": "1",
    "lease_millis": "30000",
    "renew_interval_millis": "10000",
    "safety_margin_millis": "5000",
    "renew_retry_millis": "1000",
    "max_skew_millis": "1000",
    "max_start_wait_millis": "10000",
}
JSON_RESPONSE = {"content_type": "application/json", "body": b'{"id":7}'.hex()}
SHA = "0123456789abcdef0123456789abcdef01234567"

SPECS = [
    ("record, run once, no fast path, no key creation time",
     dict(kind="record", **PG, policy=POLICY, way="run_once", fast=None, key=KEY,
          digest=DIGEST, key_created_millis=None)),
    ("record, same transaction, key creation time",
     dict(kind="record", **MY, policy=WAITING, way="same_transaction", fast=None, key=KEY,
          digest=DIGEST, key_created_millis="1764000000000")),
    ("record, lease, fast path without a TTL",
     dict(kind="record", **LITE, policy=POLICY, way="lease", fast={"ttl_millis": None},
          key={"kind": "payment", "scope": "", "id": "é-1"}, digest="ab" * 32,
          key_created_millis=None)),
    ("record, run once, fast path with a TTL",
     dict(kind="record", **PSYCOPG, policy=POLICY, way="run_once",
          fast={"ttl_millis": "3600000"}, key=KEY, digest=DIGEST, key_created_millis="0")),
    ("relay", dict(kind="relay", **PG, policy=RELAY_POLICY, seed="18446744073709551615")),
    ("record renewal",
     dict(kind="record_renewal", **MY, policy=POLICY, key=KEY, token="3",
          created_millis="1764000000000", lease_deadline_millis="1764000060000")),
    ("record cleanup", dict(kind="record_cleanup", **LITE, batch_size="500")),
    ("outbox cleanup",
     dict(kind="outbox_cleanup", **PG, sent_before_millis="1764000000000", batch_size="1000")),
    ("record load", dict(kind="record_load", **PG, key=KEY)),
    ("outbox load",
     dict(kind="outbox_load", **MY, message_kind="order.created", business_key="order-7")),
    ("enqueue",
     dict(kind="enqueue", **LITE, message_id="9223372036854775807", message_kind="order.created",
          business_key="order-7", payload=b'{"order":7}'.hex())),
    ("migrations: migrate", dict(kind="migrations", **PSYCOPG, pending=False)),
    ("migrations: pending", dict(kind="migrations", **LITE, pending=True)),
    ("heartbeat",
     dict(kind="heartbeat", **PG, policy=POLICY, key=KEY, token="3",
          created_millis="1764000000000", lease_deadline_millis="1764000060000",
          renew_every_millis="20000")),
    ("heartbeat, inside a transaction (none)",
     dict(kind="heartbeat", **MY, policy=POLICY, key=KEY, token="1",
          created_millis="1764000000000", lease_deadline_millis="1764000060000",
          renew_every_millis=None)),
    ("enqueue, empty payload",
     dict(kind="enqueue", **PG, message_id="1", message_kind="k", business_key="b", payload="")),
    ("segment", dict(kind="segment", **PG, tag="orders", policy=SEGMENT_POLICY)),
    ("segment, every bound at its edge",
     dict(kind="segment", **LITE, tag="t" * 64, policy={
         "initial_step": "9223372036854775807", "min_step": "1",
         "max_step": "9223372036854775807", "fetch_at_percent": 100,
         "grow_below_millis": "0", "shrink_above_millis": "0"})),
    ("lease acquire, with a timeout",
     dict(kind="lease_acquire", **PG, policy=LEASE_POLICY, owner="host-1:4242",
          timeout_millis="5000")),
    ("lease acquire, no timeout, a datacenter split",
     dict(kind="lease_acquire", **MY, policy=dict(
         LEASE_POLICY, datacenter_bits=5, epoch_millis="1288834974657",
         lease_millis="60000", renew_interval_millis="20000", safety_margin_millis="10000",
         renew_retry_millis="500", max_skew_millis="0", max_start_wait_millis="0"),
          owner="pod-é", timeout_millis=None)),
    ("lease renew", dict(kind="lease_renew", **PSYCOPG, guard="1")),
    ("lease release", dict(kind="lease_release", **LITE, guard="18446744073709551615")),
]

NOW = "1764000000123"
INPUT_CASES = [
    ("any", "start", {"tag": "start", "now_millis": NOW}),
    ("any", "rows: none", {"tag": "rows", "now_millis": NOW, "rows": []}),
    ("any", "rows: every value type", {
        "tag": "rows", "now_millis": NOW, "rows": [
            [{"type": "null"}, {"type": "int", "value": "-9223372036854775808"},
             {"type": "text", "value": "pending"}, {"type": "bytes", "value": "00ff"}],
            [],
            [{"type": "int", "value": "1"}],
        ]}),
    ("any", "affected", {"tag": "affected", "now_millis": NOW, "count": "18446744073709551615"}),
    *[("any", f"failed: {c}", {"tag": "failed", "now_millis": NOW, "class": c,
                                "message": f"{c} happened"}) for c in CLASSES],
    ("any", "resume", {"tag": "resume", "now_millis": "0"}),
    ("record", "finish: succeeded", {
        "tag": "finish", "now_millis": NOW,
        "outcome": {"outcome": "succeeded", "response": JSON_RESPONSE}}),
    ("record", "finish: succeeded, empty body", {
        "tag": "finish", "now_millis": NOW,
        "outcome": {"outcome": "succeeded",
                    "response": {"content_type": "text/plain", "body": ""}}}),
    ("record", "finish: failed, final, with a response", {
        "tag": "finish", "now_millis": NOW,
        "outcome": {"outcome": "failed", "retryable": False, "message": "card declined",
                    "response": {"content_type": "application/problem+json",
                                 "body": b'{"status":402}'.hex()}}}),
    ("record", "finish: failed, retryable, no response", {
        "tag": "finish", "now_millis": NOW,
        "outcome": {"outcome": "failed", "retryable": True, "message": "timeout",
                    "response": None}}),
    ("record", "finish: not a response", {
        "tag": "finish", "now_millis": NOW,
        "outcome": {"outcome": "not_a_response", "type_name": "dict"}}),
    ("record", "finish: raised", {
        "tag": "finish", "now_millis": NOW,
        "outcome": {"outcome": "raised", "type_name": "ValueError", "message": "bad input"}}),
    ("record", "finish: raised, empty message", {
        "tag": "finish", "now_millis": NOW,
        "outcome": {"outcome": "raised", "type_name": "IllegalStateException",
                    "message": ""}}),
    ("relay", "sent", {"tag": "sent", "now_millis": NOW}),
    ("relay", "send failed", {"tag": "send_failed", "now_millis": NOW,
                              "error": "broker refused: é"}),
    ("record", "redis: nil", {"tag": "redis", "now_millis": NOW, "answer": {"answer": "nil"}}),
    ("record", "redis: fields", {
        "tag": "redis", "now_millis": NOW,
        "answer": {"answer": "fields", "fields": [b"done".hex(), None, "", b"42".hex()]}}),
    ("record", "redis: no fields", {
        "tag": "redis", "now_millis": NOW, "answer": {"answer": "fields", "fields": []}}),
    ("record", "redis: failed", {
        "tag": "redis", "now_millis": NOW,
        "answer": {"answer": "failed", "message": "CLUSTERDOWN"}}),
    ("record", "redis: noscript", {
        "tag": "redis", "now_millis": NOW, "answer": {"answer": "noscript"}}),
    ("record", "report", {"tag": "report", "now_millis": NOW}),
    ("heartbeat", "stop", {"tag": "stop", "now_millis": NOW}),
    ("segment", "take", {"tag": "take", "now_millis": NOW}),
    ("segment", "fetch", {"tag": "fetch", "now_millis": NOW}),
    ("segment", "abandon", {"tag": "abandon", "now_millis": NOW}),
    ("segment", "forked", {"tag": "forked", "now_millis": "0"}),
    ("lease_renew", "mark", {"tag": "mark", "now_millis": NOW,
                             "high_water_millis": "1764000000100"}),
    ("lease_release", "mark: before the first ID", {"tag": "mark", "now_millis": NOW,
                                                     "high_water_millis": "0"}),
]

REPLAYED = {"status": "succeeded", "fingerprint": DIGEST, "token": "2",
            "lease_deadline_millis": "1764000060000", "created_millis": "1764000000000",
            "expires_millis": "1764086400000", "response": JSON_RESPONSE, "error": None}
STORED_MESSAGE = {"message_id": "42", "message_kind": "order.created",
                  "business_key": "order-7", "payload": b'{"order":7}'.hex(),
                  "status": "pending", "attempts": "0", "next_attempt_millis": "1764000000000",
                  "last_error": None, "created_millis": "1764000000000",
                  "updated_millis": "1764000000000"}

STEP_CASES = [
    ("any", "run: no parameters", {"tag": "run", "name": "lease_count", "params": []}),
    ("any", "run: every value type", {
        "tag": "run", "name": "claim", "params": [
            {"type": "text", "value": "order.create"}, {"type": "int", "value": "-1"},
            {"type": "bytes", "value": DIGEST}, {"type": "null"}]}),
    ("any", "pause", {"tag": "pause", "millis": "5"}),
    ("any", "fail: store error, no place", {
        "tag": "fail", "code": "store.unavailable", "detail": "connection refused",
        "part": None, "position": None, "problem": "store_unavailable", "concern": "store"}),
    ("any", "fail: key error with part and position", {
        "tag": "fail", "code": "key.invalid_character", "detail": "U+0020 at byte 3",
        "part": "id", "position": "3", "problem": None, "concern": "key"}),
    ("any", "begin: write", {"tag": "begin", "write": True}),
    ("any", "begin: read", {"tag": "begin", "write": False}),
    ("any", "commit", {"tag": "commit"}),
    ("any", "rollback", {"tag": "rollback"}),
    ("record", "redis: EVALSHA", {
        "tag": "redis", "eval": False, "script": "check", "code": SHA,
        "keys": ["mintid:{order.create:tenant-1:abc}"],
        "args": [DIGEST, b"60000".hex()]}),
    ("record", "redis: EVAL, no args", {
        "tag": "redis", "eval": True, "script": "forget", "code": "return 1",
        "keys": ["mintid:{k:s:i}"], "args": []}),
    ("record", "report: nothing", {"tag": "report", "lookup": None, "write_failures": 0}),
    ("record", "report: fallback, failed writes",
     {"tag": "report", "lookup": "fallback", "write_failures": 2}),
    ("record", "yield: execute, renewed", {
        "tag": "yield", "decision": "execute", "token": "1", "created_millis": NOW,
        "lease_deadline_millis": "1764000060123", "renew_every_millis": "20000"}),
    ("record", "yield: execute, inside a transaction", {
        "tag": "yield", "decision": "execute", "token": "4", "created_millis": NOW,
        "lease_deadline_millis": "1764000060123", "renew_every_millis": None}),
    ("record", "done: executed", {"tag": "done", "decision": "execute", "finished": "executed"}),
    ("record", "done: operation failed, stored", {
        "tag": "done", "decision": "execute", "finished": "operation_failed", "stored": True}),
    ("record", "done: operation failed, released", {
        "tag": "done", "decision": "execute", "finished": "operation_failed", "stored": False}),
    ("record", "done: replay of a success", {
        "tag": "done", "decision": "replay", "finished": "replay", "outcome": "succeeded",
        "response": JSON_RESPONSE, "error": None}),
    ("record", "done: replay of a failure with its response", {
        "tag": "done", "decision": "replay", "finished": "replay", "outcome": "failed",
        "response": {"content_type": "application/problem+json", "body": ""},
        "error": "card declined"}),
    ("record", "done: replay of a failure without a response", {
        "tag": "done", "decision": "replay", "finished": "replay", "outcome": "failed",
        "response": None, "error": "ValueError"}),
    ("record", "done: in progress", {
        "tag": "done", "decision": "in_progress", "finished": "in_progress",
        "retry_after_millis": "1000"}),
    ("record", "done: fingerprint mismatch", {
        "tag": "done", "decision": "fingerprint_mismatch", "finished": "fingerprint_mismatch"}),
    ("record", "done: key too old", {
        "tag": "done", "decision": "key_too_old", "finished": "key_too_old"}),
    ("record", "done: operation failed and its failure not recorded", {
        "tag": "done", "decision": "execute", "finished": "operation_failed_unrecorded",
        "store_code": "store.unavailable",
        "store_message": "the database is unavailable: nothing was run"}),
    ("relay", "yield: send", {
        "tag": "yield", "message_id": "9223372036854775807", "message_kind": "order.created",
        "business_key": "order-7", "payload": b'{"order":7}'.hex(), "attempts": "1",
        "created_millis": NOW}),
    ("relay", "done: the report", {
        "tag": "done", "sent": "5", "retried": "1", "dead": "0", "given_up": "2",
        "claim_lost": "0", "released": "3", "mark_failed": "1"}),
    ("record_renewal", "done: renewed", {"tag": "done", "lease_deadline_millis": "1764000120000"}),
    ("record_cleanup", "done: deleted", {"tag": "done", "deleted": "1200"}),
    ("outbox_cleanup", "done: deleted", {"tag": "done", "deleted": "0"}),
    ("record_load", "done: no record", {"tag": "done", "record": None}),
    ("record_load", "done: a replayable success", {"tag": "done", "record": REPLAYED}),
    ("record_load", "done: a stored failure", {"tag": "done", "record": dict(
        REPLAYED, status="failed", response=None, error="card declined")}),
    ("record_load", "done: a pending claim", {"tag": "done", "record": dict(
        REPLAYED, status="pending", response=None)}),
    ("outbox_load", "done: no message", {"tag": "done", "message": None}),
    ("outbox_load", "done: a pending message", {"tag": "done", "message": STORED_MESSAGE}),
    ("outbox_load", "done: a dead message", {"tag": "done", "message": dict(
        STORED_MESSAGE, status="dead", attempts="10", last_error="broker refused",
        payload="")}),
    ("migrations", "yield: execute a statement", {
        "tag": "yield", "version": 2,
        "sql": "CREATE TABLE IF NOT EXISTS worker_lease (\n    worker_id bigint NOT NULL\n)"}),
    ("migrations", "done: versions", {"tag": "done", "versions": [1, 2, 3, 4]}),
    ("migrations", "done: none", {"tag": "done", "versions": []}),
    ("heartbeat", "yield: pause, the deadline as last renewed", {
        "tag": "yield", "millis": "20000", "lease_deadline_millis": "1764000080000"}),
    ("heartbeat", "done: stopped", {"tag": "done", "lease_deadline_millis": "1764000060000"}),
    ("enqueue", "done: new", {"tag": "done", "enqueued": "new"}),
    ("enqueue", "done: already enqueued", {"tag": "done", "enqueued": "already_enqueued"}),
    ("segment", "taken: hand out", {"tag": "taken", "first": "1001", "count": "1",
                                    "action": "hand_out", "wait_millis": "0"}),
    ("segment", "taken: fetch beside", {"tag": "taken", "first": "1900", "count": "100",
                                        "action": "fetch_beside", "wait_millis": "0"}),
    ("segment", "taken: fetch now", {"tag": "taken", "first": "0", "count": "0",
                                     "action": "fetch_now", "wait_millis": "0"}),
    ("segment", "taken: wait", {"tag": "taken", "first": "0", "count": "0",
                                "action": "wait", "wait_millis": "100"}),
    ("segment", "done: a segment installed", {"tag": "done", "max_id": "2000", "step": "1000"}),
    ("segment", "yield: abandoned or forked", {"tag": "yield"}),
    ("lease_acquire", "done: acquired", {
        "tag": "done", "worker_id": "1023", "fencing_token": "5",
        "lease_deadline_millis": "1764000030123", "start_after_millis": "1764000000050",
        "ready_at_millis": "1764000000051", "acquired_millis": NOW,
        "high_water_millis": "1764000000050", "expected_token": "4"}),
    ("lease_renew", "done: renewed", {"tag": "done", "lease_deadline_millis": "1764000030123"}),
    ("lease_release", "done: released", {"tag": "done", "released": True}),
    ("lease_release", "done: not this holder's", {"tag": "done", "released": False}),
]


def main():
    cases = []
    for name, meaning in SPECS:
        cases.append({"name": f"spec: {name}", "op": "spec", "kind": meaning["kind"],
                      "hex": spec(meaning).hex(), "meaning": meaning})
    for kind, name, meaning in INPUT_CASES:
        cases.append({"name": f"input: {name}", "op": "input", "kind": kind,
                      "hex": input_(meaning).hex(), "meaning": meaning})
    for kind, name, meaning in STEP_CASES:
        cases.append({"name": f"step ({kind}): {name}", "op": "step", "kind": kind,
                      "hex": step(kind, meaning).hex(), "meaning": meaning})
    document = {
        "description": "The wire (docs/spec.md, Store drivers, \"The wire\"): specs, inputs and "
        "steps as packed bytes beside their meaning. A runner decodes hex to meaning and "
        "encodes meaning to hex. u64/i64 as decimal strings, u8/u32 as numbers, bytes as hex, "
        "absent optionals null. See tests/vectors/README.md.",
        "version": VERSION,
        "kinds": KINDS,
        "inputs": INPUTS,
        "steps": STEPS,
        "cases": cases,
    }
    print(json.dumps(document, indent=1, ensure_ascii=True))


main()
