"""The runner of tests/vectors/wire.json: every case decoded from ``hex`` to its ``meaning``
and encoded back to ``hex``, through :mod:`mintid._wire_codec`.

The package encodes specs and inputs and decodes steps; the other direction of each (which
the package never needs) is written here on the codec's :class:`~mintid._wire_codec.Reader`,
so both directions of every case are pinned. An op, kind or tag this runner does not know
fails its case.
"""

from __future__ import annotations

import struct
from types import SimpleNamespace
from typing import Any

from mintid import _wire_codec as wire

Meaning = dict[str, Any]

DIALECTS = ["postgres", "mysql", "sqlite"]
PLACEHOLDERS = ["question", "numbered", "format"]
KINDS = {
    "record": wire.RECORD,
    "relay": wire.RELAY,
    "record_renewal": wire.RECORD_RENEWAL,
    "record_cleanup": wire.RECORD_CLEANUP,
    "outbox_cleanup": wire.OUTBOX_CLEANUP,
    "record_load": wire.RECORD_LOAD,
    "outbox_load": wire.OUTBOX_LOAD,
    "enqueue": wire.ENQUEUE,
    "migrations": wire.MIGRATIONS,
    "heartbeat": wire.HEARTBEAT,
    "segment": wire.SEGMENT,
    "lease_acquire": wire.LEASE_ACQUIRE,
    "lease_renew": wire.LEASE_RENEW,
    "lease_release": wire.LEASE_RELEASE,
}
INPUTS = {
    "start": wire.START,
    "rows": wire.ROWS,
    "affected": wire.AFFECTED,
    "failed": wire.FAILED,
    "resume": wire.RESUME,
    "finish": wire.FINISH,
    "sent": wire.SENT,
    "send_failed": wire.SEND_FAILED,
    "redis": wire.REDIS_ANSWER,
    "report": wire.TAKE_REPORT,
    "stop": wire.STOP,
    "take": wire.TAKE,
    "fetch": wire.FETCH,
    "abandon": wire.ABANDON,
    "forked": wire.FORKED,
    "mark": wire.MARK,
}
STEPS = {
    "run": wire.RUN,
    "pause": wire.PAUSE,
    "yield": wire.YIELD,
    "done": wire.DONE,
    "fail": wire.FAIL,
    "redis": wire.REDIS,
    "begin": wire.BEGIN,
    "commit": wire.COMMIT,
    "rollback": wire.ROLLBACK,
    "report": wire.REPORT,
    "taken": wire.TAKEN,
}
ACTIONS = ["hand_out", "fetch_beside", "fetch_now", "wait"]
SEGMENT_POLICY = [
    "initial_step",
    "min_step",
    "max_step",
    "fetch_at_percent",
    "grow_below_millis",
    "shrink_above_millis",
]
LAYOUT = ["time_bits", "worker_bits", "sequence_bits", "datacenter_bits", "epoch_millis"]
LAYOUT += ["tick_millis"]
LEASE_DURATIONS = [
    "lease_millis",
    "renew_interval_millis",
    "safety_margin_millis",
    "renew_retry_millis",
    "max_skew_millis",
    "max_start_wait_millis",
]
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
WAYS = ["run_once", "same_transaction", "lease"]
CLASSES = [
    "unique_violation",
    "serialization",
    "connection_lost",
    "constraint",
    "other",
    "schema_missing",
]
VALUES = ["null", "int", "text", "bytes"]
RECORD_POLICY = [
    "lease_millis",
    "retention_millis",
    "store_errors",
    "retry_after_millis",
    "max_wait_millis",
    "poll_millis",
]
RELAY_POLICY = [
    "batch_size",
    "claim_millis",
    "base_backoff_millis",
    "max_backoff_millis",
    "jitter_percent",
    "max_attempts",
]
RELAY_COUNTS = ["sent", "retried", "dead", "given_up", "claim_lost", "released", "mark_failed"]
ENQUEUED = ["new", "already_enqueued"]
#: The meaning's numbers that are JSON numbers (``u8``, ``u32``) or booleans; every other
#: integer is a decimal string.
SMALL = {"jitter_percent", "write_failures", "version", "versions", "fetch_at_percent"}
SMALL |= {"time_bits", "worker_bits", "sequence_bits", "datacenter_bits"}


def check_tables(document: dict[str, Any]) -> None:
    """The file's tag tables are the codec's."""
    assert document["kinds"] == KINDS
    assert document["inputs"] == INPUTS
    assert document["steps"] == STEPS


def meaning_of(value: Any, name: str = "") -> Any:
    """A decoded value as the vectors spell it: integers as decimal strings (but ``u8`` and
    ``u32`` fields), bytes as hex, tuples as lists.
    """
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if name in SMALL else str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dict):
        return {key: meaning_of(item, key) for key, item in value.items()}
    return [meaning_of(item, name) for item in value]


def numbers(meaning: Meaning, names: list[str]) -> SimpleNamespace:
    """The named fields of ``meaning`` as integers (booleans kept)."""
    return SimpleNamespace(
        **{n: meaning[n] if isinstance(meaning[n], bool) else int(meaning[n]) for n in names}
    )


def response_meaning(response: tuple[str, bytes] | None) -> Meaning | None:
    if response is None:
        return None
    return {"content_type": response[0], "body": response[1].hex()}


def response_of(meaning: Meaning) -> tuple[str, bytes]:
    return meaning["content_type"], bytes.fromhex(meaning["body"])


def value_meaning(value: Any) -> Meaning:
    if value is None:
        return {"type": "null"}
    if isinstance(value, int):
        return {"type": "int", "value": str(value)}
    if isinstance(value, str):
        return {"type": "text", "value": value}
    return {"type": "bytes", "value": value.hex()}


def value_of(meaning: Meaning) -> Any:
    kind = meaning["type"]
    assert kind in VALUES, kind
    if kind == "null":
        return None
    if kind == "int":
        return int(meaning["value"])
    return meaning["value"] if kind == "text" else bytes.fromhex(meaning["value"])


# --- specs: encoded by the codec, decoded here ------------------------------------------------


def key_of(meaning: Meaning) -> bytes:
    return wire.key(meaning["kind"], meaning["scope"], meaning["id"])


def encode_spec(m: Meaning) -> bytes:
    kind = m["kind"]
    head = wire.head(
        KINDS[kind], DIALECTS.index(m["dialect"]), PLACEHOLDERS.index(m["placeholder"])
    )
    u64 = wire.u64
    if kind == "record":
        fast, created = m["fast"], m["key_created_millis"]
        ttl = None if fast is None or fast["ttl_millis"] is None else int(fast["ttl_millis"])
        return wire.record_spec(
            head,
            wire.record_policy(numbers(m["policy"], RECORD_POLICY)),
            WAYS.index(m["way"]),
            fast is not None,
            ttl,
            key_of(m["key"]),
            bytes.fromhex(m["digest"]),
            None if created is None else int(created),
        )
    if kind == "relay":
        return head + wire.relay_policy(numbers(m["policy"], RELAY_POLICY)) + u64(int(m["seed"]))
    if kind == "record_renewal":
        held = wire.Held(
            "execute",
            int(m["token"]),
            int(m["created_millis"]),
            int(m["lease_deadline_millis"]),
            None,
        )
        policy = wire.record_policy(numbers(m["policy"], RECORD_POLICY))
        return wire.renewal_spec(head, policy, key_of(m["key"]), held)
    if kind == "heartbeat":
        every = None if m["renew_every_millis"] is None else int(m["renew_every_millis"])
        held = wire.Held(
            "execute",
            int(m["token"]),
            int(m["created_millis"]),
            int(m["lease_deadline_millis"]),
            every,
        )
        policy = wire.record_policy(numbers(m["policy"], RECORD_POLICY))
        return wire.renewal_spec(head, policy, key_of(m["key"]), held)
    if kind == "segment":
        policy = wire.segment_policy(numbers(m["policy"], SEGMENT_POLICY))
        return wire.segment_spec(head, m["tag"], policy)
    if kind == "lease_acquire":
        lease = numbers(m["policy"], LEASE_DURATIONS)
        lease.layout = numbers(m["policy"], LAYOUT)
        timeout = None if m["timeout_millis"] is None else int(m["timeout_millis"])
        return wire.acquire_spec(head, wire.lease_policy(lease), m["owner"], timeout)
    if kind in ("lease_renew", "lease_release"):
        return head + u64(int(m["guard"]))
    if kind == "migrations":
        return head + bytes((m["pending"],))
    if kind == "record_cleanup":
        return head + u64(int(m["batch_size"]))
    if kind == "outbox_cleanup":
        return head + u64(int(m["sent_before_millis"])) + u64(int(m["batch_size"]))
    if kind == "record_load":
        return head + key_of(m["key"])
    if kind == "outbox_load":
        return head + wire.outbox_key(m["message_kind"], m["business_key"])
    assert kind == "enqueue", f"no spec encoder for kind {kind!r}"
    return (
        head
        + u64(int(m["message_id"]))
        + wire.outbox_key(m["message_kind"], m["business_key"])
        + wire.raw(bytes.fromhex(m["payload"]))
    )


def decode_spec(data: bytes) -> Meaning:
    read = wire.Reader(data, 0)
    kind = {tag: name for name, tag in KINDS.items()}[read.u8()]
    m: Meaning = {
        "kind": kind,
        "dialect": DIALECTS[read.u8()],
        "placeholder": PLACEHOLDERS[read.u8()],
    }

    def record_policy() -> Meaning:
        fields = struct.unpack_from("<QQBQQQ", read.fixed(41))
        return dict(zip(RECORD_POLICY, (*fields[:2], bool(fields[2]), *fields[3:]), strict=True))

    def key() -> Meaning:
        return {"kind": read.text(), "scope": read.text(), "id": read.text()}

    if kind == "record":
        m["policy"] = record_policy()
        m["way"] = WAYS[read.u8()]
        m["fast"] = read.optional(lambda: {"ttl_millis": read.optional(read.u64)})
        m["key"] = key()
        m["digest"] = read.fixed(32)
        m["key_created_millis"] = read.optional(read.u64)
    elif kind == "relay":
        fields = struct.unpack_from("<QQQQBQ", read.fixed(41))
        m["policy"] = dict(zip(RELAY_POLICY, fields, strict=True))
        m["seed"] = read.u64()
    elif kind in ("record_renewal", "heartbeat"):
        m["policy"] = record_policy()
        m["key"] = key()
        for name in ("token", "created_millis", "lease_deadline_millis"):
            m[name] = read.u64()
        if kind == "heartbeat":
            m["renew_every_millis"] = read.optional(read.u64)
    elif kind == "migrations":
        m["pending"] = read.flag()
    elif kind == "segment":
        m["tag"] = read.text()
        fields = struct.unpack_from("<QQQBQQ", read.fixed(41))
        m["policy"] = dict(zip(SEGMENT_POLICY, fields, strict=True))
    elif kind == "lease_acquire":
        fields = struct.unpack_from("<BBBB8Q", read.fixed(68))
        m["policy"] = dict(zip(LAYOUT + LEASE_DURATIONS, fields, strict=True))
        m["owner"] = read.text()
        m["timeout_millis"] = read.optional(read.u64)
    elif kind in ("lease_renew", "lease_release"):
        m["guard"] = read.u64()
    elif kind == "record_cleanup":
        m["batch_size"] = read.u64()
    elif kind == "outbox_cleanup":
        m["sent_before_millis"] = read.u64()
        m["batch_size"] = read.u64()
    elif kind == "record_load":
        m["key"] = key()
    elif kind in ("outbox_load", "enqueue"):
        if kind == "enqueue":
            m["message_id"] = read.u64()
        m["message_kind"] = read.text()
        m["business_key"] = read.text()
        if kind == "enqueue":
            m["payload"] = read.raw()
    assert read.at == len(data), "bytes left over"
    return meaning_of(m)  # type: ignore[no-any-return]


# --- inputs: encoded by the codec, decoded here -----------------------------------------------


def encode_outcome(o: Meaning, now: int) -> bytes:
    kind = o["outcome"]
    if kind == "succeeded":
        return wire.finish_succeeded(*response_of(o["response"]), now)
    if kind == "failed":
        stored = None if o["response"] is None else response_of(o["response"])
        return wire.finish_failed(o["message"], o["retryable"], stored, now)
    if kind == "not_a_response":
        return wire.finish_not_a_response(o["type_name"], now)
    assert kind == "raised", f"no outcome {kind!r}"
    return wire.finish_raised(o["type_name"], o["message"], now)


def encode_redis_answer(a: Meaning) -> bytes:
    kind = a["answer"]
    if kind == "nil":
        return b"\0"
    if kind == "fields":
        fields = [None if f is None else bytes.fromhex(f) for f in a["fields"]]
        return b"\1" + wire.u32(len(fields)) + b"".join(wire.optional(f, wire.raw) for f in fields)
    if kind == "failed":
        return b"\2" + wire.text(a["message"])
    assert kind == "noscript", f"no Redis answer {kind!r}"
    return b"\3"


def encode_input(m: Meaning) -> bytes:
    tag, now = m["tag"], int(m["now_millis"])
    assert tag in INPUTS, f"no input {tag!r}"
    if tag == "rows":
        return wire.rows([[value_of(v) for v in row] for row in m["rows"]], now)
    if tag == "affected":
        return wire.affected(int(m["count"]), now)
    if tag == "failed":
        return wire.failed(CLASSES.index(m["class"]), m["message"], now)
    if tag == "finish":
        return encode_outcome(m["outcome"], now)
    if tag == "send_failed":
        return wire.send_failed(m["error"], now)
    if tag == "redis":
        return wire.redis_answer(encode_redis_answer(m["answer"]), now)
    if tag == "mark":
        return wire.mark(int(m["high_water_millis"]), now)
    return wire.tagged(INPUTS[tag], now)


def decode_input(data: bytes) -> Meaning:
    read = wire.Reader(data, 0)
    tag = {t: name for name, t in INPUTS.items()}[read.u8()]
    m: Meaning = {"tag": tag, "now_millis": read.u64()}
    if tag == "rows":
        m["rows"] = read.items(lambda: read.items(lambda: value_meaning(read.value())))
    elif tag == "affected":
        m["count"] = read.u64()
    elif tag == "failed":
        m["class"] = CLASSES[read.u8()]
        m["message"] = read.text()
    elif tag == "finish":
        outcome = ["succeeded", "failed", "not_a_response", "raised"][read.u8()]
        o: Meaning = {"outcome": outcome}
        if outcome == "succeeded":
            o["response"] = response_meaning(read.response())
        elif outcome == "failed":
            o["retryable"] = read.flag()
            o["message"] = read.text()
            o["response"] = response_meaning(read.optional(read.response))
        else:
            o["type_name"] = read.text()
            if outcome == "raised":
                o["message"] = read.text()
        m["outcome"] = o
    elif tag == "send_failed":
        m["error"] = read.text()
    elif tag == "mark":
        m["high_water_millis"] = read.u64()
    elif tag == "redis":
        answer = ["nil", "fields", "failed", "noscript"][read.u8()]
        a: Meaning = {"answer": answer}
        if answer == "fields":
            a["fields"] = read.items(lambda: read.optional(read.raw))
        elif answer == "failed":
            a["message"] = read.text()
        m["answer"] = a
    assert read.at == len(data), "bytes left over"
    return meaning_of(m)  # type: ignore[no-any-return]


# --- steps: decoded by the codec, encoded here ------------------------------------------------


def decode_step(kind: str, data: bytes) -> Meaning:
    tag = {t: name for name, t in STEPS.items()}[data[0]]
    m: Meaning = {"tag": tag}
    if tag == "run":
        name, params = wire.run(data)
        m.update(name=name, params=[value_meaning(p) for p in params])
    elif tag == "pause":
        m["millis"] = wire.pause_millis(data)
    elif tag == "fail":
        m.update(wire.failure(data)._asdict())
    elif tag == "redis":
        m.update(wire.redis_call(data)._asdict())
    elif tag == "begin":
        m["write"] = wire.begin_write(data)
    elif tag == "report":
        m["lookup"], m["write_failures"] = wire.fast_report(data)
    elif tag == "taken":
        first, count, action, wait = wire.taken(data)
        m.update(first=first, count=count, action=ACTIONS[action], wait_millis=wait)
    elif tag == "yield" and kind == "segment":
        assert len(data) == 1, "a segment's yield has no field"
    elif tag == "yield" and kind == "record":
        m.update(wire.held(data)._asdict())
    elif tag == "yield" and kind == "migrations":
        read = wire.Reader(data)
        m.update(version=read.u32(), sql=read.text())
    elif tag == "yield" and kind == "heartbeat":
        m.update(millis=wire.pause_millis(data), lease_deadline_millis=wire.beat_deadline(data))
    elif tag == "yield":
        assert kind == "relay", f"no yield for kind {kind!r}"
        sending = wire.message(data)._asdict()
        sending["message_kind"] = sending.pop("kind")
        m.update(sending)
    elif tag == "done":
        m.update(decode_done(kind, data))
    return meaning_of(m)  # type: ignore[no-any-return]


def decode_done(kind: str, data: bytes) -> Meaning:
    if kind == "record":
        decision, finished, *rest = wire.finished(data)
        m: Meaning = {"decision": decision, "finished": finished}
        if finished == "operation_failed":
            m["stored"] = rest[0]
        elif finished == "replay":
            outcome, response, error = rest
            m.update(
                outcome=["succeeded", "failed"][outcome],
                response=response_meaning(response),
                error=error,
            )
        elif finished == "in_progress":
            m["retry_after_millis"] = rest[0]
        elif finished == "operation_failed_unrecorded":
            m["store_code"], m["store_message"] = rest
        return m
    if kind == "relay":
        return dict(zip(RELAY_COUNTS, wire.relay_report(data), strict=True))
    if kind in ("record_renewal", "heartbeat"):
        return {"lease_deadline_millis": wire.count(data)}
    if kind == "migrations":
        return {"versions": wire.versions(data)}
    if kind == "segment":
        read = wire.Reader(data)
        return {"max_id": read.u64(), "step": read.u64()}
    if kind == "lease_acquire":
        return dict(zip(ACQUIRED, wire.acquired(data), strict=True))
    if kind == "lease_renew":
        return {"lease_deadline_millis": wire.count(data)}
    if kind == "lease_release":
        return {"released": data[1] != 0}
    if kind in ("record_cleanup", "outbox_cleanup"):
        return {"deleted": wire.count(data)}
    if kind == "record_load":
        record = wire.stored_record(data)
        if record is None:
            return {"record": None}
        fields = record._asdict()
        fields["response"] = response_meaning(record.response)
        return {"record": fields}
    if kind == "outbox_load":
        message = wire.stored_message(data)
        if message is None:
            return {"message": None}
        fields = message._asdict()
        fields["message_kind"] = fields.pop("kind")
        return {"message": fields}
    assert kind == "enqueue", f"no done for kind {kind!r}"
    return {"enqueued": ENQUEUED[data[1]]}


def encode_step(kind: str, m: Meaning) -> bytes:
    tag = m["tag"]
    out = bytes((STEPS[tag],))
    u64, text, opt = wire.u64, wire.text, wire.optional
    if tag == "run":
        params = bytearray(wire.u32(len(m["params"])))
        for p in m["params"]:
            wire.value(params, value_of(p))
        return out + text(m["name"]) + params
    if tag == "pause":
        return out + u64(int(m["millis"]))
    if tag == "fail":
        position = None if m["position"] is None else int(m["position"])
        return (
            out
            + text(m["code"])
            + text(m["detail"])
            + opt(m["part"], text)
            + opt(position, u64)
            + opt(m["problem"], text)
            + text(m["concern"])
        )
    if tag == "redis":
        keys = wire.u32(len(m["keys"])) + b"".join(text(k) for k in m["keys"])
        args = wire.u32(len(m["args"])) + b"".join(wire.raw(bytes.fromhex(a)) for a in m["args"])
        return out + bytes((m["eval"],)) + text(m["script"]) + text(m["code"]) + keys + args
    if tag == "begin":
        return out + bytes((m["write"],))
    if tag == "report":
        return out + opt(m["lookup"], text) + wire.u32(m["write_failures"])
    if tag == "taken":
        counts = u64(int(m["first"])) + u64(int(m["count"]))
        return out + counts + bytes((ACTIONS.index(m["action"]),)) + u64(int(m["wait_millis"]))
    if tag == "yield" and kind == "segment":
        return out
    if tag in ("commit", "rollback"):
        return out
    return out + encode_kind_step(kind, m)


def encode_kind_step(kind: str, m: Meaning) -> bytes:
    u64, text, opt = wire.u64, wire.text, wire.optional

    def response(r: Meaning | None) -> bytes:
        return opt(None if r is None else response_of(r), lambda x: wire.response(*x))

    if m["tag"] == "yield" and kind == "record":
        every = None if m["renew_every_millis"] is None else int(m["renew_every_millis"])
        times = u64(int(m["token"])) + u64(int(m["created_millis"]))
        return text(m["decision"]) + times + u64(int(m["lease_deadline_millis"])) + opt(every, u64)
    if m["tag"] == "yield" and kind == "migrations":
        return wire.u32(m["version"]) + text(m["sql"])
    if m["tag"] == "yield" and kind == "heartbeat":
        return u64(int(m["millis"])) + u64(int(m["lease_deadline_millis"]))
    if m["tag"] == "yield":
        assert kind == "relay", f"no yield for kind {kind!r}"
        return (
            u64(int(m["message_id"]))
            + wire.outbox_key(m["message_kind"], m["business_key"])
            + wire.raw(bytes.fromhex(m["payload"]))
            + u64(int(m["attempts"]))
            + u64(int(m["created_millis"]))
        )
    assert m["tag"] == "done", f"no step {m['tag']!r}"
    if kind == "record":
        end = m["finished"]
        out = text(m["decision"]) + bytes((wire.FINISHED.index(end),))
        if end == "operation_failed":
            return out + bytes((m["stored"],))
        if end == "replay":
            outcome = bytes((["succeeded", "failed"].index(m["outcome"]),))
            return out + outcome + response(m["response"]) + opt(m["error"], text)
        if end == "in_progress":
            return out + u64(int(m["retry_after_millis"]))
        if end == "operation_failed_unrecorded":
            return out + text(m["store_code"]) + text(m["store_message"])
        return out
    if kind == "relay":
        return b"".join(u64(int(m[name])) for name in RELAY_COUNTS)
    if kind in ("record_renewal", "heartbeat", "lease_renew"):
        return u64(int(m["lease_deadline_millis"]))
    if kind == "segment":
        return u64(int(m["max_id"])) + u64(int(m["step"]))
    if kind == "lease_acquire":
        return b"".join(u64(int(m[name])) for name in ACQUIRED)
    if kind == "lease_release":
        return bytes((m["released"],))
    if kind == "migrations":
        return wire.u32(len(m["versions"])) + b"".join(wire.u32(v) for v in m["versions"])
    if kind in ("record_cleanup", "outbox_cleanup"):
        return u64(int(m["deleted"]))
    if kind == "record_load":
        r = m["record"]
        if r is None:
            return b"\0"
        numbers = b"".join(
            u64(int(r[n]))
            for n in ("token", "lease_deadline_millis", "created_millis", "expires_millis")
        )
        fingerprint = bytes.fromhex(r["fingerprint"])
        tail = response(r["response"]) + opt(r["error"], text)
        return b"\1" + text(r["status"]) + fingerprint + numbers + tail
    if kind == "outbox_load":
        s = m["message"]
        if s is None:
            return b"\0"
        return (
            b"\1"
            + u64(int(s["message_id"]))
            + wire.outbox_key(s["message_kind"], s["business_key"])
            + wire.raw(bytes.fromhex(s["payload"]))
            + text(s["status"])
            + u64(int(s["attempts"]))
            + u64(int(s["next_attempt_millis"]))
            + opt(s["last_error"], text)
            + u64(int(s["created_millis"]))
            + u64(int(s["updated_millis"]))
        )
    assert kind == "enqueue", f"no done for kind {kind!r}"
    return bytes((ENQUEUED.index(m["enqueued"]),))


def run_case(case: Meaning) -> None:
    """Decode the case's ``hex`` to its ``meaning``, and encode the meaning to the hex."""
    op, kind, data, meaning = case["op"], case["kind"], bytes.fromhex(case["hex"]), case["meaning"]
    assert kind == "any" or kind in KINDS, f"no kind {kind!r}"
    if op == "spec":
        assert decode_spec(data) == meaning
        assert encode_spec(meaning).hex() == case["hex"]
    elif op == "input":
        assert decode_input(data) == meaning
        assert encode_input(meaning).hex() == case["hex"]
    else:
        assert op == "step", f"no op {op!r}"
        assert decode_step(kind, data) == meaning
        assert encode_step(kind, meaning).hex() == case["hex"]
