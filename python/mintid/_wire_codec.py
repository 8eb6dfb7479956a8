"""The wire's layout (``docs/spec.md``, "The wire"): specs and inputs packed, steps read.

Pure :mod:`struct` code, no native call: :mod:`mintid._wire` hands the bytes to the core.
Little-endian; ``u8`` tags; every count and length a ``u32``; a text is UTF-8. Held by
``tests/vectors/wire.json`` (``python/tests/test_vectors.py`` decodes and re-encodes it).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple, TypeVar

from mintid._library import refusal

__all__ = [
    "DONE",
    "FAIL",
    "PAUSE",
    "REDIS",
    "RUN",
    "YIELD",
    "Held",
    "Reader",
    "error_bytes",
    "free_text",
]

T = TypeVar("T")

#: Spec kinds.
RECORD, RELAY, RECORD_RENEWAL, RECORD_CLEANUP, OUTBOX_CLEANUP = 1, 2, 3, 4, 5
RECORD_LOAD, OUTBOX_LOAD, ENQUEUE, MIGRATIONS, HEARTBEAT = 6, 7, 8, 9, 10
SEGMENT, LEASE_ACQUIRE, LEASE_RENEW, LEASE_RELEASE = 11, 12, 13, 14
#: Input tags.
START, ROWS, AFFECTED, FAILED, RESUME, FINISH, SENT, SEND_FAILED, REDIS_ANSWER, TAKE_REPORT = range(
    1, 11
)
STOP, TAKE, FETCH, ABANDON, FORKED, MARK = range(11, 17)
#: Step tags.
RUN, PAUSE, YIELD, DONE, FAIL, REDIS, BEGIN, COMMIT, ROLLBACK, REPORT, TAKEN = range(1, 12)
#: What a segment's ``TAKEN`` says to do.
HAND_OUT, FETCH_BESIDE, FETCH_NOW, WAIT = range(4)
#: Value tags.
NULL, INT, TEXT, BYTES = 0, 1, 2, 3

_U8: Final = struct.Struct("<B")
_U32: Final = struct.Struct("<I")
_U64: Final = struct.Struct("<Q")
_I64: Final = struct.Struct("<q")
_INPUT: Final = struct.Struct("<BQ")
_RECORD_POLICY: Final = struct.Struct("<QQBQQQ")
_RELAY_POLICY: Final = struct.Struct("<QQQQBQ")
_SEGMENT_POLICY: Final = struct.Struct("<QQQBQQ")
_LEASE_POLICY: Final = struct.Struct("<BBBB8Q")
_TAKEN: Final = struct.Struct("<QQBQ")
_ACQUIRED: Final = struct.Struct("<8Q")
_HELD: Final = struct.Struct("<QQQ")
_RELAY_REPORT: Final = struct.Struct("<7Q")
#: A surrogate code point: in a ``str`` always a lone one, which UTF-8 cannot encode.
SURROGATE: Final = re.compile("[\ud800-\udfff]")


def free_text(value: str) -> bytes:
    """UTF-8 of a text, each lone surrogate written as U+FFFD (as JS and Kotlin write it)."""
    try:
        return value.encode()
    except UnicodeEncodeError:
        return SURROGATE.sub("\ufffd", value).encode()


def error_bytes(value: str) -> bytes:
    """An error text as it crosses to the core, a lone surrogate included (its
    three ``surrogatepass`` bytes): the core makes it storable.
    """  # noqa: D205
    return value.encode("utf-8", "surrogatepass")


#: A ``u32``.
u32: Final = _U32.pack
#: A ``u64``.
u64: Final = _U64.pack


def raw(data: bytes) -> bytes:
    """``data`` with its ``u32`` length in front."""
    return _U32.pack(len(data)) + data


def text(value: str) -> bytes:
    """A text (its lone surrogates as U+FFFD)."""
    return raw(free_text(value))


def optional(value: T | None, encode: Callable[[T], bytes]) -> bytes:
    """``0``, or ``1`` and ``value`` encoded."""
    return b"\0" if value is None else b"\1" + encode(value)


def value(out: bytearray, item: Any) -> None:
    """Append a value: ``None``, an ``int``, bytes, or (anything else) its text."""
    if item is None:
        out.append(NULL)
    elif type(item) is int:
        out.append(INT)
        out += _I64.pack(item)
    elif isinstance(item, bytes | bytearray | memoryview):
        out.append(BYTES)
        out += _U32.pack(len(item))
        out += item
    else:
        data = free_text(str(item))
        out.append(TEXT)
        out += _U32.pack(len(data))
        out += data


# --- specs ------------------------------------------------------------------------------------


def head(kind: int, dialect: int, placeholder: int) -> bytes:
    """A spec's kind and manifest (``dialect``: 0 postgres, 1 mysql, 2 sqlite;
    ``placeholder``: 0 question, 1 numbered, 2 format).
    """  # noqa: D205
    return bytes((kind, dialect, placeholder))


def record_policy(policy: Any) -> bytes:
    """A record policy (the core's fields, by name)."""
    return _RECORD_POLICY.pack(
        policy.lease_millis,
        policy.retention_millis,
        policy.store_errors,
        policy.retry_after_millis,
        policy.max_wait_millis,
        policy.poll_millis,
    )


def relay_policy(policy: Any) -> bytes:
    """A relay policy (the core's fields, by name)."""
    return _RELAY_POLICY.pack(
        policy.batch_size,
        policy.claim_millis,
        policy.base_backoff_millis,
        policy.max_backoff_millis,
        policy.jitter_percent,
        policy.max_attempts,
    )


def segment_policy(policy: Any) -> bytes:
    """A segment policy (the core's fields, by name)."""
    return _SEGMENT_POLICY.pack(
        policy.initial_step,
        policy.min_step,
        policy.max_step,
        policy.fetch_at_percent,
        policy.grow_below_millis,
        policy.shrink_above_millis,
    )


def lease_policy(policy: Any) -> bytes:
    """A worker-lease policy: its layout's fields, then its durations (by name)."""
    layout = policy.layout
    return _LEASE_POLICY.pack(
        layout.time_bits,
        layout.worker_bits,
        layout.sequence_bits,
        layout.datacenter_bits,
        layout.epoch_millis,
        layout.tick_millis,
        policy.lease_millis,
        policy.renew_interval_millis,
        policy.safety_margin_millis,
        policy.renew_retry_millis,
        policy.max_skew_millis,
        policy.max_start_wait_millis,
    )


def key(kind: str, scope: str, id: str) -> bytes:
    """A key's three parts (sent as they are: the core refuses what a key cannot hold)."""
    return b"".join(raw(part.encode("utf-8", "surrogatepass")) for part in (kind, scope, id))


def record_spec(
    head: bytes,
    policy: bytes,
    way: int,
    fast: bool,
    ttl_millis: int | None,
    key: bytes,
    digest: bytes,
    key_created_millis: int | None,
) -> bytes:
    """A record driver's spec (``fast``: with the fast path's Redis steps, its optional TTL)."""
    fast_path = b"\1" + optional(ttl_millis, u64) if fast else b"\0"
    return b"".join((head, policy, bytes((way,)), fast_path, key, digest)) + optional(
        key_created_millis, u64
    )


def renewal_spec(head: bytes, policy: bytes, key: bytes, held: Held) -> bytes:
    """A record renewal's spec (a heartbeat's, with ``head`` of that kind): the claim
    ``held`` on ``key``.
    """  # noqa: D205
    claim = _HELD.pack(held.token, held.created_millis, held.lease_deadline_millis)
    beat = optional(held.renew_every_millis, u64) if head[0] == HEARTBEAT else b""
    return head + policy + key + claim + beat


def segment_spec(head: bytes, tag: str, policy: bytes) -> bytes:
    """A segment driver's spec: its tag (as it is: the core refuses a bad one) and policy."""
    return head + raw(error_bytes(tag)) + policy


def acquire_spec(head: bytes, policy: bytes, owner: str, timeout_millis: int | None) -> bytes:
    """A lease acquisition's spec: the policy, the owner, the timeout."""
    return head + policy + raw(error_bytes(owner)) + optional(timeout_millis, u64)


def outbox_key(kind: str, business_key: str) -> bytes:
    """A message's kind and business key."""
    return text(kind) + text(business_key)


# --- inputs -----------------------------------------------------------------------------------


def tagged(tag: int, now_millis: int) -> bytes:
    """An input's tag and time (all an input without fields is)."""
    return _INPUT.pack(tag, now_millis)


def rows(rows: Sequence[Sequence[Any]], now_millis: int) -> bytes:
    """Rows from a cursor (each in ``SELECT`` order)."""
    out = bytearray(_INPUT.pack(ROWS, now_millis))
    out += _U32.pack(len(rows))
    for row in rows:
        out += _U32.pack(len(row))
        for item in row:
            value(out, item)
    return bytes(out)


def affected(count: int, now_millis: int) -> bytes:
    """An affected-row count."""
    return _INPUT.pack(AFFECTED, now_millis) + _U64.pack(count)


def failed(error_class: int, message: str, now_millis: int) -> bytes:
    """A failed statement: its class (0 unique violation … 4 other) and the driver's message."""
    return _INPUT.pack(FAILED, now_millis) + bytes((error_class,)) + raw(error_bytes(message))


def response(content_type: str, body: bytes) -> bytes:
    """A response: content type and body."""
    return text(content_type) + raw(body)


def finish_succeeded(content_type: str, body: bytes, now_millis: int) -> bytes:
    """The operation's response."""
    return _INPUT.pack(FINISH, now_millis) + b"\0" + response(content_type, body)


def finish_failed(
    message: str, retryable: bool, stored: tuple[str, bytes] | None, now_millis: int
) -> bytes:
    """The operation's failure, and the response it stores, if any."""
    failure = bytes((1, int(retryable))) + raw(error_bytes(message))
    return _INPUT.pack(FINISH, now_millis) + failure + optional(stored, lambda r: response(*r))


def finish_not_a_response(type_name: str, now_millis: int) -> bytes:
    """What the operation returned was not a response: its type's name."""
    return _INPUT.pack(FINISH, now_millis) + b"\2" + text(type_name)


def finish_raised(type_name: str, message: str, now_millis: int) -> bytes:
    """The operation raised: the type's name and the message (the core composes the text)."""
    return _INPUT.pack(FINISH, now_millis) + b"\3" + text(type_name) + raw(error_bytes(message))


def send_failed(error: str, now_millis: int) -> bytes:
    """The relay's last send failed with ``error``."""
    return _INPUT.pack(SEND_FAILED, now_millis) + raw(error_bytes(error))


def mark(high_water_millis: int, now_millis: int) -> bytes:
    """A lease renewal's or release's start, with the generator's high-water time."""
    return _INPUT.pack(MARK, now_millis) + _U64.pack(high_water_millis)


def redis_answer(answer: bytes, now_millis: int) -> bytes:
    """Redis's packed answer (:mod:`mintid._wire_redis`) to the last Redis step."""
    return _INPUT.pack(REDIS_ANSWER, now_millis) + answer


# --- steps ------------------------------------------------------------------------------------


class Reader:
    """Reads a packed step from its start (after the tag)."""

    __slots__ = ("at", "data")

    def __init__(self, data: bytes, at: int = 1) -> None:
        """A reader of ``data`` at ``at`` (by default just past a step's tag)."""
        self.data = data
        self.at = at

    def u8(self) -> int:
        """A ``u8``."""
        self.at += 1
        return self.data[self.at - 1]

    def flag(self) -> bool:
        """A ``u8`` read as a boolean."""
        return self.u8() != 0

    def u32(self) -> int:
        """A ``u32``."""
        self.at += 4
        return int(_U32.unpack_from(self.data, self.at - 4)[0])

    def u64(self) -> int:
        """A ``u64``."""
        self.at += 8
        return int(_U64.unpack_from(self.data, self.at - 8)[0])

    def i64(self) -> int:
        """An ``i64``."""
        self.at += 8
        return int(_I64.unpack_from(self.data, self.at - 8)[0])

    def fixed(self, length: int) -> bytes:
        """``length`` bytes."""
        self.at += length
        return self.data[self.at - length : self.at]

    def raw(self) -> bytes:
        """Bytes with their length."""
        return self.fixed(self.u32())

    def text(self) -> str:
        """A text."""
        return self.raw().decode()

    def optional(self, read: Callable[[], T]) -> T | None:
        """``None``, or what ``read`` reads."""
        return read() if self.u8() else None

    def items(self, read: Callable[[], T]) -> list[T]:
        """A list of what ``read`` reads."""
        return [read() for _ in range(self.u32())]

    def value(self) -> Any:
        """A value: ``None``, an ``int``, a ``str`` or ``bytes``."""
        tag = self.u8()
        if tag == INT:
            return self.i64()
        if tag == NULL:
            return None
        return self.text() if tag == TEXT else self.raw()

    def response(self) -> tuple[str, bytes]:
        """A response: content type and body."""
        return self.text(), self.raw()


def run(step: bytes) -> tuple[str, list[Any]]:
    """A ``RUN`` step's statement name and parameter values, in binding order."""
    read = Reader(step)
    name = read.text()
    return name, read.items(read.value)


def pause_millis(step: bytes) -> int:
    """A ``PAUSE`` step's milliseconds (a heartbeat's ``YIELD``: its pause's)."""
    return int(_U64.unpack_from(step, 1)[0])


def beat_deadline(step: bytes) -> int:
    """A heartbeat's ``YIELD``: the lease deadline as last renewed."""
    return int(_U64.unpack_from(step, 9)[0])


class Failure(NamedTuple):
    """A ``FAIL`` step's fields (the core's typed error)."""

    code: str
    detail: str
    part: str | None
    position: int | None
    problem: str | None
    concern: str


def failure(step: bytes) -> Failure:
    """A ``FAIL`` step's fields."""
    read = Reader(step)
    return Failure(
        read.text(),
        read.text(),
        read.optional(read.text),
        read.optional(read.u64),
        read.optional(read.text),
        read.text(),
    )


def error(step: bytes) -> Exception:
    """A ``FAIL`` step as the core's typed error."""
    return refusal(step)


def begin_write(step: bytes) -> bool:
    """A ``BEGIN`` step's ``write`` (SQLite's ``BEGIN IMMEDIATE``)."""
    return step[1] != 0


class Held(NamedTuple):
    """A record's ``YIELD``: the core's decision (``execute``) and the claim to execute under."""

    decision: str
    token: int
    created_millis: int
    lease_deadline_millis: int
    renew_every_millis: int | None


def held(step: bytes) -> Held:
    """A record's ``YIELD`` step."""
    read = Reader(step)
    return Held(read.text(), read.u64(), read.u64(), read.u64(), read.optional(read.u64))


#: A record's ``DONE``: ``(decision, end, *fields)``, ``end`` one of ``executed``,
#: ``operation_failed`` (stored), ``replay`` (outcome 0 succeeded or 1 failed, response or
#: ``None``, error or ``None``), ``in_progress`` (retry_after_millis),
#: ``fingerprint_mismatch``, ``key_too_old``, ``operation_failed_unrecorded`` (the store
#: error's code and message).
Finished = tuple[Any, ...]
FINISHED: Final = (
    "executed",
    "operation_failed",
    "replay",
    "in_progress",
    "fingerprint_mismatch",
    "key_too_old",
    "operation_failed_unrecorded",
)


def finished(step: bytes) -> Finished:
    """A record's ``DONE`` step."""
    read = Reader(step)
    decision = read.text()
    end = FINISHED[read.u8()]
    if end == "operation_failed":
        return (decision, end, read.flag())
    if end == "replay":
        return (decision, end, read.u8(), read.optional(read.response), read.optional(read.text))
    if end == "in_progress":
        return (decision, end, read.u64())
    if end == "operation_failed_unrecorded":
        return (decision, end, read.text(), read.text())
    return (decision, end)


class Message(NamedTuple):
    """A relay's ``YIELD``: the message to send."""

    message_id: int
    kind: str
    business_key: str
    payload: bytes
    attempts: int
    created_millis: int


def message(step: bytes) -> Message:
    """A relay's ``YIELD`` step."""
    read = Reader(step)
    return Message(read.u64(), read.text(), read.text(), read.raw(), read.u64(), read.u64())


def relay_report(step: bytes) -> tuple[int, ...]:
    """A relay's ``DONE``: sent, retried, dead, given up, claim lost, released, mark failed."""
    return tuple(_RELAY_REPORT.unpack_from(step, 1))


def taken(step: bytes) -> tuple[int, int, int, int]:
    """A segment's ``TAKEN``: the run's first ID and count, the action, the wait (ms)."""
    return _TAKEN.unpack_from(step, 1)


def acquired(step: bytes) -> tuple[int, ...]:
    """A lease acquisition's ``DONE``: ``worker_id``, ``fencing_token``,
    ``lease_deadline_millis``, ``start_after_millis``, ``ready_at_millis``,
    ``acquired_millis``, ``high_water_millis``, ``expected_token``.
    """  # noqa: D205
    return _ACQUIRED.unpack_from(step, 1)


def migration_sql(step: bytes) -> str:
    """A migration driver's ``YIELD``: the statement to execute (after its version)."""
    return Reader(step, 5).text()


def versions(step: bytes) -> list[int]:
    """A migration driver's ``DONE``: the versions applied (or pending)."""
    read = Reader(step)
    return read.items(read.u32)


def count(step: bytes) -> int:
    """The ``u64`` a ``DONE`` step holds (a renewal's deadline, a cleanup's deleted rows)."""
    return int(_U64.unpack_from(step, 1)[0])


class StoredRecord(NamedTuple):
    """A record load's ``DONE``: the stored record."""

    status: str
    fingerprint: bytes
    token: int
    lease_deadline_millis: int
    created_millis: int
    expires_millis: int
    response: tuple[str, bytes] | None
    error: str | None


def stored_record(step: bytes) -> StoredRecord | None:
    """A record load's ``DONE`` step."""
    read = Reader(step)
    if not read.u8():
        return None
    return StoredRecord(
        read.text(),
        read.fixed(32),
        read.u64(),
        read.u64(),
        read.u64(),
        read.u64(),
        read.optional(read.response),
        read.optional(read.text),
    )


class StoredMessage(NamedTuple):
    """An outbox load's ``DONE``: the stored message."""

    message_id: int
    kind: str
    business_key: str
    payload: bytes
    status: str
    attempts: int
    next_attempt_millis: int
    last_error: str | None
    created_millis: int
    updated_millis: int


def stored_message(step: bytes) -> StoredMessage | None:
    """An outbox load's ``DONE`` step."""
    read = Reader(step)
    if not read.u8():
        return None
    return StoredMessage(
        read.u64(),
        read.text(),
        read.text(),
        read.raw(),
        read.text(),
        read.u64(),
        read.u64(),
        read.optional(read.text),
        read.u64(),
        read.u64(),
    )


class RedisCall(NamedTuple):
    """A ``REDIS`` step: ``EVAL`` (with the source) or ``EVALSHA`` (with the SHA-1)."""

    eval: bool
    script: str
    code: str
    keys: list[str]
    args: list[bytes]


def redis_call(step: bytes) -> RedisCall:
    """A ``REDIS`` step."""
    read = Reader(step)
    return RedisCall(
        read.flag(), read.text(), read.text(), read.items(read.text), read.items(read.raw)
    )


def fast_report(step: bytes) -> tuple[str | None, int]:
    """A ``REPORT`` step: the lookup's verdict (``hit``, ``miss``, ``fallback``, or
    ``None``) and how many writes failed.
    """  # noqa: D205
    read = Reader(step)
    return read.optional(read.text), read.u32()
