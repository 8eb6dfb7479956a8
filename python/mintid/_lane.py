"""The lane: the core's plain C entry points (``mintid_lane_*``) for the hot
paths, a key's text, the record driver (with its Redis fast path's steps)
and the outbox relay, one :mod:`ctypes` call per step.

uniffi's Python pays for every buffer it allocates or frees and lifts every
value of an enum through interpreted code; the lane passes the key, digest
and rows as pointers and hands back each step as one packed ``bytes``, read
here with :mod:`struct`. The layout is the core's (``docs/spec.md``, "The
lane"); this module only reads and writes it and owns the handles.
"""  # noqa: D205

from __future__ import annotations

import ctypes
import re
import struct
from typing import Any, Final

from mintid import _lane_redis
from mintid._ffi import mintid_ffi as _generated
from mintid._library import refusal as _error
from mintid._native import ffi

__all__ = ["Finished", "Lane", "LaneDriver", "RelayDriver", "drive", "drive_async", "key_text"]

RUN: Final = 1
PAUSE: Final = 2
YIELD: Final = 3
DONE: Final = 4
FAIL: Final = 5
REDIS: Final = 6

_NULL, _INT, _TEXT, _BYTES = 0, 1, 2, 3
_I64: Final = struct.Struct("<q")
_U64: Final = struct.Struct("<Q")
_U32: Final = struct.Struct("<I")
_HELD: Final = struct.Struct("<QQQq")
_REPORT: Final = struct.Struct("<7Q")
_SENT_AT: Final = struct.Struct("<QQ")
_OUTCOMES: Final = (ffi.Outcome.SUCCEEDED, ffi.Outcome.FAILED)


def _query(step: bytes) -> tuple[str, list[Any]]:
    """A ``RUN`` step's statement name and parameter values, in binding order."""
    end = 2 + step[1]
    name = step[2:end].decode()
    count = step[end]
    at = end + 1
    params: list[Any] = []
    append = params.append
    for _ in range(count):
        kind = step[at]
        at += 1
        if kind == _INT:
            append(_I64.unpack_from(step, at)[0])
            at += 8
        elif kind == _NULL:
            append(None)
        else:
            length = _U32.unpack_from(step, at)[0]
            at += 4
            raw = step[at : at + length]
            append(raw.decode() if kind == _TEXT else raw)
            at += length
    return name, params


def _pause_millis(step: bytes) -> int:
    """A ``PAUSE`` step's milliseconds."""
    return int(_U64.unpack_from(step, 1)[0])


def _held(step: bytes) -> ffi.Held:
    """A record's ``YIELD`` step: the claim to execute under."""
    token, created, deadline, every = _HELD.unpack_from(step, 1)
    return ffi.Held(
        token=token,
        created_millis=created,
        lease_deadline_millis=deadline,
        renew_every_millis=None if every < 0 else every,
    )


def _optional(step: bytes, at: int) -> tuple[bytes | None, int]:
    if step[at] == 0:
        return None, at + 1
    length = _U32.unpack_from(step, at + 1)[0]
    return step[at + 5 : at + 5 + length], at + 5 + length


#: A protocol's end: ``("executed",)``, ``("operation_failed", stored)``,
#: ``("replay", outcome, (content_type, body) | None, error | None)``,
#: ``("in_progress", retry_after_millis)``, ``("fingerprint_mismatch",)`` or
#: ``("key_too_old",)``.
Finished = tuple[Any, ...]


def _finished(step: bytes) -> Finished:
    """A ``DONE`` step's end."""
    kind = step[1]
    if kind == 1:
        return ("operation_failed", bool(step[2]))
    if kind == 2:
        response = None
        at = 4
        if step[3]:
            content_type, at = _optional(step, 3)
            length = _U32.unpack_from(step, at)[0]
            body = step[at + 4 : at + 4 + length]
            at += 4 + length
            assert content_type is not None
            response = (content_type.decode(), body)
        error, _ = _optional(step, at)
        return ("replay", _OUTCOMES[step[2]], response, None if error is None else error.decode())
    if kind == 3:
        return ("in_progress", _U64.unpack_from(step, 2)[0])
    if kind == 4:
        return ("fingerprint_mismatch",)
    if kind == 5:
        return ("key_too_old",)
    return ("executed",)


def _value(out: bytearray, value: Any) -> None:
    if value is None:
        out.append(_NULL)
    elif type(value) is int:
        out.append(_INT)
        out += _I64.pack(value)
    elif isinstance(value, bytes | bytearray | memoryview):
        out.append(_BYTES)
        out += _U32.pack(len(value))
        out += value
    else:
        raw = free_text(str(value))
        out.append(_TEXT)
        out += _U32.pack(len(raw))
        out += raw


def _pack_rows(rows: list[tuple[Any, ...]]) -> bytes:
    """Rows from a cursor (each a tuple in ``SELECT`` order), packed."""
    out = bytearray(_U32.pack(len(rows)))
    for row in rows:
        out.append(len(row))
        for value in row:
            _value(out, value)
    return bytes(out)


#: A surrogate code point: in a ``str`` always a lone one, which UTF-8 cannot encode.
SURROGATE = re.compile("[\ud800-\udfff]")


def free_text(value: str) -> bytes:
    """UTF-8 of a text, each lone surrogate written as U+FFFD (as JS and Kotlin write it).

    For free texts (a driver's message, a column value; an operation's error goes as it is,
    see ``_error_text``): a key text never gets here with a lone surrogate (the core refused it
    with ``key.invalid_character``), and a content type with U+FFFD is refused by the core.
    """
    try:
        return value.encode()
    except UnicodeEncodeError:
        return SURROGATE.sub("\ufffd", value).encode()


def error_bytes(value: str) -> bytes:
    """An error text as it crosses to the core, a lone surrogate included (its
    three ``surrogatepass`` bytes): the core makes it storable.
    """  # noqa: D205
    return value.encode("utf-8", "surrogatepass")


def _error_text(value: str) -> bytes:
    raw = error_bytes(value)
    return _U32.pack(len(raw)) + raw


def _text(value: str | None) -> bytes:
    raw = b"" if value is None else free_text(value)
    return _U32.pack(len(raw)) + raw


def _response(content_type: str, body: bytes) -> bytes:
    return _text(content_type) + _U32.pack(len(body)) + body


_LIB: Final = _generated._UniffiLib
_P = ctypes.c_void_p
_SIZE = ctypes.c_size_t
_BYTES_P = ctypes.c_char_p
_C_U64 = ctypes.c_uint64
#: A buffer a step usually fits in (a longer one is copied again, whole).
_CAP: Final = 1024


def _entry(name: str, restype: Any, *argtypes: Any) -> Any:
    function = getattr(_LIB, name)
    function.argtypes = argtypes
    function.restype = restype
    return function


_NEW: Final = _entry(
    "mintid_lane_record_new",
    _P,
    _C_U64,
    ctypes.c_uint8,
    _BYTES_P,
    _SIZE,
    _BYTES_P,
    _SIZE,
    ctypes.c_int64,
)
_START: Final = _entry("mintid_lane_record_start", _SIZE, _P, _C_U64, _P, _SIZE)
_FINISH: Final = _entry("mintid_lane_record_finish", _SIZE, _P, _BYTES_P, _SIZE, _C_U64, _P, _SIZE)
_PUSH_REDIS: Final = _entry(
    "mintid_lane_record_push_redis", _SIZE, _P, _BYTES_P, _SIZE, _C_U64, _P, _SIZE
)
_FAST_REPORT: Final = _entry("mintid_lane_record_fast_report", _SIZE, _P, _P, _SIZE)
_RELAY_START: Final = _entry("mintid_lane_relay_start", _SIZE, _P, _C_U64, _P, _SIZE)
_RELAY_SENT: Final = _entry("mintid_lane_relay_sent", _SIZE, _P, _C_U64, _P, _SIZE)
_RELAY_FAILED: Final = _entry(
    "mintid_lane_relay_failed", _SIZE, _P, _BYTES_P, _SIZE, _C_U64, _P, _SIZE
)
_LANE_FREE: Final = _entry("mintid_lane_free", None, _C_U64)
_KEY_TEXT: Final = _entry(
    "mintid_lane_key_text", _SIZE, _BYTES_P, _SIZE, _BYTES_P, _SIZE, _BYTES_P, _SIZE, _P, _SIZE
)


class _Entries:
    """The entry points every driver on the lane has (``mintid_lane_<kind>_*``)."""

    __slots__ = ("affected", "failed", "free", "resume", "rows", "step")

    def __init__(self, kind: str) -> None:
        """The entry points of the ``kind`` drivers (``record``, ``relay``)."""
        prefix = f"mintid_lane_{kind}_"
        self.step = _entry(prefix + "step", _SIZE, _P, _P, _SIZE)
        self.affected = _entry(prefix + "push_affected", _SIZE, _P, _C_U64, _C_U64, _P, _SIZE)
        self.rows = _entry(prefix + "push_rows", _SIZE, _P, _BYTES_P, _SIZE, _C_U64, _P, _SIZE)
        self.failed = _entry(
            prefix + "push_failed",
            _SIZE,
            _P,
            ctypes.c_uint8,
            _BYTES_P,
            _SIZE,
            _C_U64,
            _P,
            _SIZE,
        )
        self.resume = _entry(prefix + "resume", _SIZE, _P, _P, _SIZE)
        self.free = _entry(prefix + "free", None, _P)


_CLASSES: Final = {
    ffi.DbErrorClass.UNIQUE_VIOLATION: 0,
    ffi.DbErrorClass.SERIALIZATION: 1,
    ffi.DbErrorClass.CONNECTION_LOST: 2,
    ffi.DbErrorClass.CONSTRAINT: 3,
    ffi.DbErrorClass.OTHER: 4,
}
_WAYS: Final = {ffi.Way.RUN_ONCE: 0, ffi.Way.SAME_TRANSACTION: 1, ffi.Way.LEASE: 2}
_string_at = ctypes.string_at
_buffer = ctypes.create_string_buffer


def key_text(kind: str, scope: str, id: str) -> str:
    """The canonical text of a key (the core's rule), or its ``key.*`` error."""
    parts = [part.encode("utf-8", "surrogatepass") for part in (kind, scope, id)]
    cap = _CAP
    while True:
        out = _buffer(cap)
        length = _KEY_TEXT(
            parts[0], len(parts[0]), parts[1], len(parts[1]), parts[2], len(parts[2]), out, cap
        )
        if length <= cap:
            break
        cap = length
    packed = _string_at(out, length)
    if packed[0]:
        raise _error(packed)
    return packed[1:].decode()


class Lane:
    """The manifest and policy every driver of one store shares (a core
    handle), and its Redis fast path, if any.
    """  # noqa: D205

    __slots__ = ("_fast", "_handle")

    def __init__(self, drivers: ffi.RecordDrivers, fast: Any = None) -> None:
        """The lane of ``drivers``; with ``fast`` (a store's bound fast path:
        its ``client``, ``ttl_millis`` and ``reported``), every driver made on
        it has the fast path's Redis steps.
        """  # noqa: D205
        self._fast = fast
        self._handle = drivers.lane() if fast is None else drivers.fast_lane(fast.ttl_millis)

    def driver(
        self,
        way: ffi.Way,
        key_text: str,
        digest: bytes,
        key_created_millis: int | None,
        now_millis: int,
    ) -> tuple[LaneDriver, bytes]:
        """A driver for one request and its first step."""
        key = key_text.encode()
        created = -1 if key_created_millis is None else key_created_millis
        driver = LaneDriver(
            _NEW(self._handle, _WAYS[way], key, len(key), digest, len(digest), created),
            self._fast,
        )
        out = driver._out
        return driver, driver._read(_START(driver._handle, now_millis, out, _CAP))

    def __del__(self) -> None:
        """Free the core's handle."""
        _LANE_FREE(self._handle)


class _Driver:
    """A core driver on the lane (a handle): push answers, get packed steps.

    Used by one thread at a time (its store serialises the calls).
    """

    __slots__ = ("_entries", "_handle", "_out")

    def __init__(self, entries: _Entries, handle: Any) -> None:
        """Own ``handle``, a driver of ``entries``' kind."""
        self._entries = entries
        self._handle = handle
        self._out = _buffer(_CAP)

    def _read(self, length: int) -> bytes:
        """The step just packed: from the buffer, or copied again when longer."""
        if length > _CAP:
            out = _buffer(length)
            self._entries.step(self._handle, out, length)
            return _string_at(out, length)
        return _string_at(self._out, length)

    def push_affected(self, count: int, now_millis: int) -> bytes:
        """Push an affected-row count; the next step."""
        return self._read(self._entries.affected(self._handle, count, now_millis, self._out, _CAP))

    def push_rows(self, rows: list[tuple[Any, ...]], now_millis: int) -> bytes:
        """Push rows (tuples in ``SELECT`` order); the next step."""
        packed = _pack_rows(rows)
        return self._read(
            self._entries.rows(self._handle, packed, len(packed), now_millis, self._out, _CAP)
        )

    def push_failed(self, kind: Any, message: str, now_millis: int) -> bytes:
        """Push a failed query (the executor's class, the driver's message); the next step."""
        raw = free_text(message)
        return self._read(
            self._entries.failed(
                self._handle, _CLASSES[kind], raw, len(raw), now_millis, self._out, _CAP
            )
        )

    def resume(self) -> bytes:
        """Continue after a pause; the next step."""
        return self._read(self._entries.resume(self._handle, self._out, _CAP))

    def end(self, step: bytes) -> Any:
        """What a ``YIELD`` or ``DONE`` step hands over."""
        raise NotImplementedError

    def report(self) -> None:
        """Count what the driver's fast path came to (nothing without one)."""

    def __del__(self) -> None:
        """Free the core's handle."""
        self._entries.free(self._handle)


_RECORD: Final = _Entries("record")
_RELAY: Final = _Entries("relay")


class LaneDriver(_Driver):
    """One request's record driver, with its lane's fast path (or ``None``)."""

    __slots__ = ("fast",)

    def __init__(self, handle: Any, fast: Any) -> None:
        """Own ``handle``; its Redis steps go to ``fast``'s client."""
        super().__init__(_RECORD, handle)
        self.fast = fast

    def push_redis(self, answer: bytes, now_millis: int) -> bytes:
        """Push Redis's packed answer to the last ``REDIS`` step; the next step."""
        return self._read(
            _PUSH_REDIS(self._handle, answer, len(answer), now_millis, self._out, _CAP)
        )

    def report(self) -> None:
        """Take the fast path's report since the last one and count it."""
        if self.fast is not None:
            length = _FAST_REPORT(self._handle, self._out, _CAP)
            self.fast.reported(*_lane_redis.report(_string_at(self._out, length)))

    def finish_succeeded(self, content_type: str, body: bytes, now_millis: int) -> bytes:
        """Finish with the operation's response; the next step."""
        return self._finish(b"\x00" + _response(content_type, body), now_millis)

    def finish_failed(
        self, message: str, retryable: bool, response: tuple[str, bytes] | None, now_millis: int
    ) -> bytes:
        """Finish with the operation's failure; the next step."""
        packed = b"\x01" + bytes((int(retryable),)) + _error_text(message)
        packed += b"\x00" if response is None else b"\x01" + _response(*response)
        return self._finish(packed, now_millis)

    def finish_raised(self, message: str, now_millis: int) -> bytes:
        """Finish with the text of an unexpected error (the core decides: retryable)."""
        return self._finish(b"\x03" + _error_text(message), now_millis)

    def finish_not_a_response(self, type_name: str, now_millis: int) -> bytes:
        """Finish with the name of what the operation returned; the next step."""
        return self._finish(b"\x02" + _text(type_name), now_millis)

    def _finish(self, packed: bytes, now_millis: int) -> bytes:
        return self._read(_FINISH(self._handle, packed, len(packed), now_millis, self._out, _CAP))

    def end(self, step: bytes) -> Any:
        """The :class:`~ffi.Held` claim to execute under, or the :data:`Finished` end."""
        return _held(step) if step[0] == YIELD else _finished(step)


#: A relay's hand-over: a message to send, ``(message_id, kind, business_key,
#: payload, attempts, created_millis)``, or the run's report, seven counts.
Sending = tuple[Any, ...]


class RelayDriver(_Driver):
    """One outbox relay run."""

    __slots__ = ()

    def __init__(self, manifest: ffi.Manifest, policy: ffi.RelayPolicy, seed: int) -> None:
        """A run over ``manifest`` under ``policy``; ``seed`` gives its tokens and jitter."""
        super().__init__(_RELAY, ffi.outbox_relay_lane(manifest, policy, seed))

    def start(self, now_millis: int) -> bytes:
        """The first step."""
        return self._read(_RELAY_START(self._handle, now_millis, self._out, _CAP))

    def sent(self, now_millis: int) -> bytes:
        """The message handed over last was sent; the next step."""
        return self._read(_RELAY_SENT(self._handle, now_millis, self._out, _CAP))

    def failed(self, error: str, now_millis: int) -> bytes:
        """The send of the message handed over last failed with ``error``; the next step."""
        raw = error_bytes(error)
        return self._read(_RELAY_FAILED(self._handle, raw, len(raw), now_millis, self._out, _CAP))

    def end(self, step: bytes) -> Sending:
        """A ``YIELD`` (a message to send: ``kind`` ``"send"`` first) or the ``DONE`` report."""
        if step[0] == DONE:
            return ("done", *_REPORT.unpack_from(step, 1))
        message_id = _U64.unpack_from(step, 1)[0]
        at = 9
        parts: list[bytes] = []
        for _ in range(3):
            length = _U32.unpack_from(step, at)[0]
            parts.append(step[at + 4 : at + 4 + length])
            at += 4 + length
        attempts, created = _SENT_AT.unpack_from(step, at)
        kind, business_key, payload = parts
        return (
            "send",
            message_id,
            kind.decode(),
            business_key.decode(),
            payload,
            attempts,
            created,
        )


def drive(runner: Any, clock: Any, driver: _Driver, step: bytes, *, hold: bool = False) -> Any:
    """Run ``step`` and the ones after it on ``runner`` until the driver
    hands over (a ``YIELD`` or ``DONE`` step: what :meth:`_Driver.end`
    reads from it). A ``FAIL`` step is raised as the core's typed error, the
    driver's exception behind it as ``__cause__``. A ``REDIS`` step runs on
    the client of the driver's fast path, and what the fast path came to is
    counted when the drive ends (:meth:`LaneDriver.report`). The connection
    goes back to the pool at a pause, before a Redis call and at the end,
    unless ``hold`` keeps it for the caller's next drive (the caller
    releases it).
    """  # noqa: D205
    try:
        while True:
            kind = step[0]
            if kind == RUN:
                # One entry point per answer kind: nothing compound to lift.
                result = runner.result(*_query(step))
                shape = type(result)
                if shape is int:
                    step = driver.push_affected(result, clock.now_millis())
                elif shape is list:
                    step = driver.push_rows(result, clock.now_millis())
                else:
                    failure, message = result
                    step = driver.push_failed(failure, message, clock.now_millis())
            elif kind == REDIS:
                assert isinstance(driver, LaneDriver)  # only a record driver has Redis steps
                runner.release()
                answer = _lane_redis.send(driver.fast.client, step)
                step = driver.push_redis(answer, clock.now_millis())
            elif kind == PAUSE:
                runner.release()
                clock.pause_millis(_pause_millis(step))
                step = driver.resume()
            elif kind in (YIELD, DONE):
                handed = driver.end(step)
                break
            else:
                raise _error(step) from runner.cause
    except BaseException:
        runner.release()
        raise
    finally:
        driver.report()
    if not hold:
        runner.release()
    return handed


async def drive_async(
    runner: Any, clock: Any, driver: _Driver, step: bytes, *, hold: bool = False
) -> Any:
    """:func:`drive` for an asyncio host: the same steps, with the runner's
    ``result``, ``release``, the clock's ``pause_millis`` and the Redis
    client's call awaited. The one
    async loop: every async driver on the lane runs through it.
    """  # noqa: D205
    try:
        while True:
            kind = step[0]
            if kind == RUN:
                result = await runner.result(*_query(step))
                shape = type(result)
                if shape is int:
                    step = driver.push_affected(result, clock.now_millis())
                elif shape is list:
                    step = driver.push_rows(result, clock.now_millis())
                else:
                    failure, message = result
                    step = driver.push_failed(failure, message, clock.now_millis())
            elif kind == REDIS:
                assert isinstance(driver, LaneDriver)  # only a record driver has Redis steps
                await runner.release()
                answer = await _lane_redis.send_async(driver.fast.client, step)
                step = driver.push_redis(answer, clock.now_millis())
            elif kind == PAUSE:
                await runner.release()
                await clock.pause_millis(_pause_millis(step))
                step = driver.resume()
            elif kind in (YIELD, DONE):
                handed = driver.end(step)
                break
            else:
                raise _error(step) from runner.cause
    except BaseException:
        await runner.release()
        raise
    finally:
        driver.report()
    if not hold:
        await runner.release()
    return handed
