"""The wire: the core's store drivers behind four C entry points
(``mintid_wire_new``, ``_call``, ``_step``, ``_free``), one :mod:`ctypes` call per step,
and the one step loop (:func:`driving`), run sync (:func:`run`) or awaited (:func:`run_async`).

A driver is made from a packed spec, each answer is pushed as a packed input and each
step comes back packed (:mod:`mintid._wire_codec`, ``docs/spec.md``, "The wire"). The
library is opened by the package's own loader (:mod:`mintid._library`). Every loop,
retry, limit and error is the core's: the loops here run what a step says.
"""  # noqa: D205

from __future__ import annotations

import ctypes
import threading
from collections.abc import Generator
from typing import Any, Final, TypeVar

from mintid import _wire_codec as codec
from mintid import _wire_redis
from mintid._library import entry

__all__ = [
    "SharedWire",
    "Wire",
    "answered",
    "driving",
    "key_text",
    "migrating",
    "once",
    "run",
    "run_async",
    "spec",
]

#: The layout this module reads and writes (``mintid_wire_version``).
VERSION: Final = 1
_P = ctypes.c_void_p
_SIZE = ctypes.c_size_t
_BYTES_P = ctypes.c_char_p
#: A buffer a step usually fits in (a longer one is copied again, whole).
_CAP: Final = 1024

_VERSION: Final = entry("mintid_wire_version", ctypes.c_uint32)
if _VERSION() != VERSION:
    raise ImportError(f"mintid's native library has wire layout {_VERSION()}, not {VERSION}")
_NEW: Final = entry("mintid_wire_new", _P, _BYTES_P, _SIZE)
_CALL: Final = entry("mintid_wire_call", _SIZE, _P, _BYTES_P, _SIZE, _P, _SIZE)
_STEP: Final = entry("mintid_wire_step", _SIZE, _P, _P, _SIZE)
_FREE: Final = entry("mintid_wire_free", None, _P)
_KEY_TEXT: Final = entry(
    "mintid_wire_key_text", _SIZE, _BYTES_P, _SIZE, _BYTES_P, _SIZE, _BYTES_P, _SIZE, _P, _SIZE
)
T = TypeVar("T")
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
        raise codec.error(packed)
    return packed[1:].decode()


def spec(kind: int, manifest: Any, fields: bytes = b"") -> bytes:
    """The spec of a driver of ``kind`` over ``manifest`` (the core's, of a
    database), its kind's ``fields`` after it.
    """  # noqa: D205
    return codec.head(kind, manifest.dialect.value, manifest.placeholder.value) + fields


class Wire:
    """One core driver (a native handle) made from its packed spec.

    Used by one thread at a time (its store serialises the calls).
    """

    __slots__ = ("_handle", "_out", "fast")

    def __init__(self, spec: bytes, fast: Any = None, *, checked: bool = False) -> None:
        """The driver of ``spec``; its Redis steps (a record's) go to ``fast``'s client.
        ``checked``: a spec the core refused (the wire's step from its make on) is
        raised now, as the core's typed error, rather than at the first step.
        """  # noqa: D205
        self._handle = _NEW(spec, len(spec))
        self._out = _buffer(_CAP)
        self.fast = fast
        if checked and (length := _STEP(self._handle, self._out, _CAP)):
            raise codec.error(_string_at(self._out, length))

    def call(self, packed: bytes) -> bytes:
        """Push one packed input; the next step."""
        length = _CALL(self._handle, packed, len(packed), self._out, _CAP)
        if length > _CAP:
            out = _buffer(length)
            _STEP(self._handle, out, length)
            return _string_at(out, length)
        return _string_at(self._out, length)

    def start(self, now_millis: int) -> bytes:
        """The first step."""
        return self.call(codec.tagged(codec.START, now_millis))

    def report(self) -> None:
        """Count what the driver's fast path came to since the last report (if it has one)."""
        if self.fast is not None:
            step = self.call(codec.tagged(codec.TAKE_REPORT, 0))
            self.fast.reported(*codec.fast_report(step))

    def __del__(self) -> None:
        """Free the core's handle."""
        _FREE(self._handle)


class SharedWire(Wire):
    """A wire several threads call in turn: one call (and its copy) at a time."""

    __slots__ = ("lock",)

    def __init__(self, spec: bytes, fast: Any = None, *, checked: bool = False) -> None:
        """The driver of ``spec`` (see :class:`Wire`)."""
        super().__init__(spec, fast, checked=checked)
        self.lock = threading.Lock()

    def call(self, packed: bytes) -> bytes:
        """Push one packed input under the lock; the next step."""
        with self.lock:
            return super().call(packed)


_CLASSES: Final = {
    "UNIQUE_VIOLATION": 0,
    "SERIALIZATION": 1,
    "CONNECTION_LOST": 2,
    "CONSTRAINT": 3,
    "SCHEMA_MISSING": 5,
}


def answered(result: Any, now: int) -> bytes:
    """A runner's result (rows, a count, or a failure: its class and message) packed."""
    shape = type(result)
    if shape is int:
        return codec.affected(result, now)
    if shape is list:
        return codec.rows(result, now)
    failure, message = result
    return codec.failed(_CLASSES.get(failure.name, 4), message, now)


def _steps(runner: Any, clock: Any, wire: Wire, step: bytes) -> Generator[Any, Any, bytes]:
    """The one step loop, for the sync and the asyncio drive alike: a generator
    that yields each call on the runner, the clock or the Redis client (its
    value, or in an asyncio host its awaitable) and is sent its result back
    (or thrown its exception), until the driver hands over: a ``YIELD`` or
    ``DONE`` step, returned. A ``FAIL``
    step is raised as the core's typed error, the driver's exception behind
    it as ``__cause__``.
    """  # noqa: D205
    while True:
        tag = step[0]
        if tag == codec.RUN:
            result = yield from runner.result(*codec.run(step))
        elif tag == codec.BEGIN:
            result = yield from runner.begin(codec.begin_write(step))
        elif tag == codec.COMMIT:
            result = yield from runner.commit()
        elif tag == codec.ROLLBACK:
            result = yield from runner.rollback()
        elif tag == codec.REDIS:
            yield from runner.release()
            answer = yield from _wire_redis.answer(wire.fast.client, step)
            step = wire.call(codec.redis_answer(answer, clock.now_millis()))
            continue
        elif tag == codec.PAUSE:
            if not runner.in_transaction:
                yield from runner.release()
            yield clock.pause_millis(codec.pause_millis(step))
            step = wire.call(codec.tagged(codec.RESUME, clock.now_millis()))
            continue
        elif tag in _HAND_OVER:
            return step
        else:
            raise _refused(step) from runner.cause
        step = wire.call(answered(result, clock.now_millis()))


_HAND_OVER: Final = frozenset((codec.YIELD, codec.DONE))
# CLOSED: a step loop closed unfinished (``GeneratorExit``: its task was collected) is
# collected with the wires it holds, whose handles may be freed already: it calls nothing.


def driving(
    runner: Any, clock: Any, wire: Wire, step: bytes, *, hold: bool = False
) -> Generator[Any, Any, bytes]:
    """:func:`_steps`, with the connection given back to the pool at the end
    (unless ``hold`` keeps it for the caller's next drive: the caller releases
    it) or when the loop raised, and what the wire's fast path came to
    counted; run it with :func:`run` or :func:`run_async`.
    """  # noqa: D205
    try:
        step = yield from _steps(runner, clock, wire, step)
    except GeneratorExit:
        raise  # CLOSED
    except BaseException:
        wire.report()
        yield from runner.release()
        raise
    wire.report()
    if not hold:
        yield from runner.release()
    return step


def run(steps: Generator[Any, Any, T]) -> T:
    """Run a step loop (:func:`driving`, …) whose calls are sync: each yielded
    value is the call's result already, sent back.
    """  # noqa: D205
    result: Any = None
    try:
        while True:
            result = steps.send(result)
    except StopIteration as end:
        return end.value  # type: ignore[no-any-return]


async def run_async(steps: Generator[Any, Any, T]) -> T:
    """Run a step loop whose calls are awaitables: each awaited, its result
    sent back (its exception thrown back, where the loop may catch it).
    """  # noqa: D205
    try:
        call = steps.send(None)
        while True:
            try:
                result = await call
            except BaseException as error:
                call = steps.throw(error)
            else:
                call = steps.send(result)
    except StopIteration as end:
        return end.value  # type: ignore[no-any-return]


def _refused(step: bytes) -> Exception:
    """A ``FAIL`` step as the core's typed error (a step this loop does not run is a bug)."""
    if step[0] != codec.FAIL:
        return AssertionError(f"a wire step this loop does not run: tag {step[0]}")
    return codec.error(step)


def once(runner: Any, clock: Any, packed_spec: bytes) -> Generator[Any, Any, bytes]:
    """The step loop of the driver of ``packed_spec`` from its start to its
    ``DONE`` step (returned); :func:`run` or :func:`run_async` runs it.
    """  # noqa: D205
    wire = Wire(packed_spec)
    return driving(runner, clock, wire, wire.start(clock.now_millis()))


def migrating(runner: Any, clock: Any, manifest: Any) -> Generator[Any, Any, list[int]]:
    """The step loop of the core's migration driver (``docs/spec.md``, "The
    migration driver": its lock, versions table, order and retries) on one
    connection of ``runner``, each statement it hands over executed as it is;
    it returns the versions this run applied.
    """  # noqa: D205
    wire = Wire(spec(codec.MIGRATIONS, manifest, b"\0"))
    step = wire.start(clock.now_millis())
    while (step := (yield from driving(runner, clock, wire, step, hold=True)))[0] == codec.YIELD:
        result = yield from runner.execute(codec.migration_sql(step))
        step = wire.call(answered(result, clock.now_millis()))
    yield from runner.release()
    return codec.versions(step)
