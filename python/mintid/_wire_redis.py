"""The record driver's ``REDIS`` steps, sync or asyncio: the script call a step
carries, sent on the application's redis-py client (never imported here), and its reply
packed to push back. The core chose the script, ``EVALSHA`` or ``EVAL``, its keys and
arguments, and reads the answer (``docs/spec.md``, "The wire").
"""  # noqa: D205

from __future__ import annotations

import struct
from collections.abc import Generator
from typing import Any, Final

from mintid._wire_codec import redis_call

__all__ = ["answer"]

_U32: Final = struct.Struct("<I")
_NIL: Final = b"\0"
_NO_SCRIPT: Final = b"\3"


def _call(client: Any, step: bytes) -> tuple[Any, list[Any]]:
    """A ``REDIS`` step as the client's call: its method (``eval`` with the
    source, or ``evalsha`` with the SHA-1) and arguments (the script, the
    number of keys, the keys, the arguments).
    """  # noqa: D205
    call = redis_call(step)
    method = client.eval if call.eval else client.evalsha
    return method, [call.code, len(call.keys), *call.keys, *call.args]


def _field(out: bytearray, raw: bytes) -> None:
    out.append(1)
    out += _U32.pack(len(raw))
    out += raw


def _failed(message: str) -> bytes:
    raw = message.encode("utf-8", "replace")
    return b"\2" + _U32.pack(len(raw)) + raw


def _answer(reply: Any) -> bytes:
    """A reply packed: nil, the fields of an array (nil, bytes or integer
    elements), an integer as one field, or a failure (any other shape).
    """  # noqa: D205
    if reply is None:
        return _NIL
    if isinstance(reply, int):
        out = bytearray(b"\1" + _U32.pack(1))
        _field(out, str(int(reply)).encode())
        return bytes(out)
    if not isinstance(reply, list):
        return _failed(f"a reply of type {type(reply).__name__}")
    out = bytearray(b"\1" + _U32.pack(len(reply)))
    for element in reply:
        if element is None:
            out.append(0)
        elif isinstance(element, bytes):
            _field(out, element)
        elif isinstance(element, int):
            _field(out, str(int(element)).encode())
        else:
            return _failed(f"an element of type {type(element).__name__}")
    return bytes(out)


def _error(error: Exception) -> bytes:
    """A client's exception packed: ``NOSCRIPT`` (redis-py's ``NoScriptError``)
    or a failure with its message (an error reply, a timeout, a lost
    connection, a cluster without a primary for the slot).
    """  # noqa: D205
    if any(kind.__name__ == "NoScriptError" for kind in type(error).__mro__):
        return _NO_SCRIPT
    return _failed(str(error) or type(error).__name__)


def answer(client: Any, step: bytes) -> Generator[Any, Any, bytes]:
    """Run a ``REDIS`` step on ``client``, sync or asyncio: a generator that
    yields the client's call (its reply, or its awaitable) and is sent the
    reply back (or thrown the client's exception); it returns the answer, packed.
    """  # noqa: D205
    method, args = _call(client, step)
    try:
        reply = yield method(*args)
    except Exception as error:  # down, slow, failing over: the core decides
        return _error(error)
    return _answer(reply)
