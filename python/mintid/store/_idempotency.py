"""The idempotency store: ``run_once``, ``in_transaction`` and ``claim_lease``,
each driving the core's record driver (``mintid::store::RecordDriver``).

The core does every loop, retry, pause, limit and error code: this module
pulls its steps, runs each query on a connection (:class:`QueryRunner`),
pushes the answer back, runs the operation when told, and renews a held
record's lease in the background (:class:`_Heartbeat`) while it runs.
"""  # noqa: D205

from __future__ import annotations

import contextvars
import heapq
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal

from mintid import _wire_codec as codec
from mintid._fingerprint import Fingerprint
from mintid._key import IdempotencyKey
from mintid._native import check_uint, ffi
from mintid._record import Outcome, Problem, Record, RecordPolicy, RecordStatus
from mintid._wire import RecordWire, Wire, drive, driving, once, run, spec
from mintid._wire_codec import Finished, Held
from mintid.errors import MintidError, error_class
from mintid.store._clock import StoreClock, SystemStoreClock
from mintid.store._database import Database, QueryRunner
from mintid.store._errors import RecordLostError
from mintid.store._metrics import (
    UNMEASURED,
    Completing,
    StoreMetrics,
    claiming,
    operating,
    recording,
)
from mintid.store.fast_path import RedisFastPath, bound

__all__ = [
    "MAX_RESPONSE_BYTES",
    "IdempotencyStore",
    "OperationError",
    "RecordLease",
    "RunResult",
    "StoreRequest",
    "StoredRecord",
    "StoredResponse",
]

#: The largest response stored: 1 MiB (the core's limits table).
MAX_RESPONSE_BYTES: Final = next(
    int(limit.max_bytes) for limit in ffi.store_limits() if limit.name == "record.response_body"
)

_LOG: Final = logging.getLogger("mintid.store")
#: The core's number of each way in (``docs/spec.md``, "The wire").
_WAYS: Final = {ffi.Way.RUN_ONCE: 0, ffi.Way.SAME_TRANSACTION: 1, ffi.Way.LEASE: 2}
#: The lease of the ``run_once`` operation running in this context.
_CURRENT: Final[contextvars.ContextVar[RecordLease | None]] = contextvars.ContextVar(
    "mintid_record_lease", default=None
)


@dataclass(frozen=True)
class StoredResponse:
    """An operation's response, stored and replayed byte for byte."""

    #: Its content type (at most 255 bytes of printable ASCII).
    content_type: str
    #: Its bytes (at most :data:`MAX_RESPONSE_BYTES`).
    body: bytes


@dataclass(frozen=True)
class StoreRequest:
    """What the store needs about a request besides its key."""

    #: The payload's fingerprint (:func:`mintid.fingerprint`).
    fingerprint: Fingerprint
    #: When the key was created (a verified request ID's time), if known.
    key_created_millis: int | None = None


class OperationError(Exception):
    """Raised by an operation to fail it: a final failure (the default) is
    stored and replayed to duplicates when the policy stores errors; a
    retryable one releases the key. Any other exception an operation raises
    counts as retryable and propagates unchanged.
    """  # noqa: D205

    def __init__(
        self, message: str, *, retryable: bool = False, response: StoredResponse | None = None
    ) -> None:
        """A failure with its message (stored as the record's error, cut to 1024 bytes)."""
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.response = response


def stored_of(result: object) -> StoredResponse | None:
    """The response an operation's ``result`` gives the store to keep, if any."""
    if isinstance(result, StoredResponse):
        return result
    return result.response if isinstance(result, OperationError) else None


def completing(metrics: StoreMetrics | None, way: ffi.Way, result: object) -> Any:
    """The completion storing ``result`` on ``way``, measured when ``metrics`` records."""
    return UNMEASURED if metrics is None else Completing(metrics, way, stored_of(result))


def _finish(driver: RecordWire, result: object, now_millis: int) -> bytes:
    """Tell the core what the operation came to (its return value or the
    exception it raised); the step that stores it. The text stored for an
    exception is the core's, from its type's name and message.
    """  # noqa: D205
    if isinstance(result, StoredResponse):
        packed = codec.finish_succeeded(result.content_type, result.body, now_millis)
    elif isinstance(result, OperationError):
        response = result.response
        stored = None if response is None else (response.content_type, response.body)
        packed = codec.finish_failed(result.message, result.retryable, stored, now_millis)
    elif isinstance(result, BaseException):
        packed = codec.finish_raised(type(result).__name__, str(result), now_millis)
    else:
        packed = codec.finish_not_a_response(type(result).__name__, now_millis)
    return driver.call(packed)


@dataclass(frozen=True)
class RunResult:
    """The outcome of a request: run, replayed, or refused."""

    #: ``execute``, ``replay``, ``in_progress``, ``fingerprint_mismatch`` or ``key_too_old``.
    decision: Literal["execute", "replay", "in_progress", "fingerprint_mismatch", "key_too_old"]
    #: The response run or replayed (a replayed failure's optional response).
    response: StoredResponse | None = None
    #: For a replay: which result was stored.
    outcome: Outcome | None = None
    #: For a replayed failure: the stored error text.
    error: str | None = None
    #: For a refusal: the HTTP problem to answer with.
    problem: Problem | None = None
    #: For ``in_progress``: the suggested retry delay (ms).
    retry_after_millis: int | None = None


def unrecorded(finished: Finished, error: BaseException) -> None:
    """When the core says the operation's failure ``error`` could not be recorded
    (``docs/spec.md``, "Which error the caller sees"): the store error is attached to
    ``error`` (a note with its code and message, and ``__context__``) and logged; the
    caller re-raises ``error``.
    """  # noqa: D205
    if finished[1] != "operation_failed_unrecorded":
        return
    code, message = finished[2], finished[3]
    store_error = error_class(code)(message, code)
    add_note = getattr(error, "add_note", None)  # Python 3.11+
    if add_note is not None:
        add_note(f"mintid: the failure was not recorded: {code}: {message}")
    error.__context__ = store_error
    _LOG.warning("mintid: an operation's failure was not recorded: %s: %s", code, message)


def not_run(finished: Finished) -> RunResult:
    """The result of a request the core did not run (its decision the core's)."""
    decision, end, *fields = finished
    if end == "replay":
        outcome, response, error = fields
        stored = None if response is None else StoredResponse(*response)
        return RunResult(decision, stored, _OUTCOMES[outcome], error=error)
    if end == "in_progress":
        return RunResult(decision, problem=Problem.IN_PROGRESS, retry_after_millis=fields[0])
    if end == "fingerprint_mismatch":
        return RunResult(decision, problem=Problem.FINGERPRINT_MISMATCH)
    if end == "key_too_old":
        return RunResult(decision, problem=Problem.KEY_TOO_OLD)
    raise AssertionError(f"the core ended a request it did not run with {finished!r}")


_OUTCOMES: Final = (Outcome.SUCCEEDED, Outcome.FAILED)


@dataclass(frozen=True)
class StoredRecord:
    """A record as stored: the core's :class:`~mintid.Record` and what it replays."""

    record: Record
    response: StoredResponse | None
    error: str | None


def checked_key(key: IdempotencyKey) -> IdempotencyKey:
    """``key``, checked to be an :class:`~mintid.IdempotencyKey`."""
    if not isinstance(key, IdempotencyKey):
        raise TypeError(f"key must be an IdempotencyKey, got {type(key).__name__}")
    return key


def record_spec(database: Any, policy: RecordPolicy) -> bytes:
    """The start of every record spec of a store over ``database`` under ``policy``."""
    manifest = database.manifest
    head = codec.head(codec.RECORD, manifest.dialect.value, manifest.placeholder.value)
    return head + codec.record_policy(policy)


def request_driver(
    spec: bytes,
    fast: Any,
    clock: StoreClock | Any,
    way: ffi.Way,
    key: IdempotencyKey,
    request: StoreRequest,
) -> tuple[RecordWire, bytes]:
    """A driver for ``key`` (checked) from the store's ``spec`` and its first step; with
    ``fast`` (a store's bound fast path), it has the fast path's Redis steps.
    """  # noqa: D205
    checked_key(key)
    ttl = None if fast is None else fast.ttl_millis
    created = request.key_created_millis
    spec = codec.record_spec(
        spec,
        b"",
        _WAYS[way],
        fast is not None,
        ttl,
        codec.key(key.kind, key.scope, key.id),
        request.fingerprint.digest,
        None if created is None else check_uint("key_created_millis", created),
    )
    driver = RecordWire(spec, fast)
    return driver, driver.start(clock.now_millis())


def load_spec(manifest: ffi.Manifest, key: IdempotencyKey) -> bytes:
    """The core's load of ``key`` (checked; its ``DONE``: :func:`loaded`)."""
    key = checked_key(key)
    return spec(codec.RECORD_LOAD, manifest, codec.key(key.kind, key.scope, key.id))


def loaded(step: bytes) -> StoredRecord | None:
    """A record load's end: the stored record or ``None``."""
    stored = codec.stored_record(step)
    if stored is None:
        return None
    record = Record(
        RecordStatus[stored.status.upper()],
        Fingerprint._of_core(stored.fingerprint),
        stored.token,
        stored.lease_deadline_millis,
        stored.created_millis,
        stored.expires_millis,
    )
    response = None if stored.response is None else StoredResponse(*stored.response)
    return StoredRecord(record, response, stored.error)


def cleanup_spec(manifest: ffi.Manifest, batch_size: int) -> bytes:
    """The core's cleanup of expired records (its ``DONE``: the total, ``codec.count``)."""
    return spec(codec.RECORD_CLEANUP, manifest, codec.u64(check_uint("batch_size", batch_size)))


class LeaseBase:
    """What a claim on a key is, sync or async: its driver, token and deadline,
    and the step loops of its renewal and completion (run by :class:`RecordLease`
    and :class:`mintid.store.aio.AsyncRecordLease`).
    """  # noqa: D205

    def __init__(
        self, store: Any, driver: RecordWire, key: IdempotencyKey, held: Held, finishable: bool
    ) -> None:
        """Made by a store, never by hand."""
        self._store = store
        self._driver = driver
        self._metrics = store._metrics
        self._key = key
        self._held = held
        self._finishable = finishable
        self._deadline = held.lease_deadline_millis
        self._renewal: Wire | None = None
        self._lost = False

    @property
    def token(self) -> int:
        """The fencing token of this claim."""
        return int(self._held.token)

    @property
    def lease_deadline_millis(self) -> int:
        """When the lease ends (Unix ms), as last renewed (by :meth:`renew`, or
        by each beat of a ``run_once`` operation's heartbeat).
        """  # noqa: D205
        return int(self._deadline)

    @property
    def lost(self) -> bool:
        """Whether a renewal found the key taken over or completed (``store.record_lost``)."""
        return self._lost

    def _claim_spec(self, kind: int) -> bytes:
        """The spec of this claim's renewal or heartbeat (``kind``)."""
        store, key = self._store, self._key
        manifest = store.database.manifest
        head = codec.head(kind, manifest.dialect.value, manifest.placeholder.value)
        policy, parts = codec.record_policy(store.policy), codec.key(key.kind, key.scope, key.id)
        return codec.renewal_spec(head, policy, parts, self._held)

    def _heartbeat(self) -> tuple[Wire, bytes]:
        """The core's heartbeat of this claim (``docs/spec.md``, "The heartbeat"):
        its wire and first step (a pause: ``YIELD`` with the deadline as last renewed).
        """  # noqa: D205
        wire = Wire(self._claim_spec(codec.HEARTBEAT))
        return wire, wire.start(self._store._clock.now_millis())

    def _beat_ended(self, end: bytes | BaseException) -> None:
        """The heartbeat's end: the deadline as last renewed, or its failure
        (the key taken over or completed, the lease run out, …): the operation
        no longer holds its record.
        """  # noqa: D205
        if isinstance(end, BaseException):
            if not isinstance(end, MintidError):
                _LOG.error("mintid: a record heartbeat failed", exc_info=end)
            self._lost_now()
        else:
            self._deadline = codec.count(end)

    def _lost_now(self) -> None:
        """A renewal found the key taken over or completed."""
        self._lost = True
        if self._metrics is not None:
            self._metrics.record_lost()

    def _renewing(self) -> Any:
        """The step loop of one renewal (one wire for every renewal); the new deadline."""
        store = self._store
        store.database.bound()
        if self._renewal is None:
            self._renewal = Wire(self._claim_spec(codec.RECORD_RENEWAL))
        clock, renewal = store._clock, self._renewal
        try:
            step = yield from driving(
                store._runner(), clock, renewal, renewal.start(clock.now_millis())
            )
        except RecordLostError:
            self._lost_now()
            raise
        self._deadline = codec.count(step)
        return self._deadline

    def _finishing(self, result: object) -> Any:
        """The step loop that stores ``result`` (a response or an :class:`OperationError`)."""
        if not self._finishable:
            raise TypeError("run_once completes its own lease: return or raise instead")
        store = self._store
        store.database.bound()
        yield from store._ending(store._runner(), ffi.Way.LEASE, self._driver, result)


class RecordLease(LeaseBase):
    """A claim the store holds on a key, with its lease.

    From :meth:`IdempotencyStore.claim_lease` ("lease and fence"): complete or
    fail it before :attr:`lease_deadline_millis` (:meth:`renew` moves it on);
    after it, another request may take the key over and a late write raises
    :class:`~mintid.RecordStaleTokenError`.

    Inside a :meth:`IdempotencyStore.run_once` operation,
    :meth:`RecordLease.current` is the lease the store renews in the
    background; :attr:`lost` turns true when a renewal found the key taken
    over (check it before a write that must happen once). ``run_once``
    completes that lease itself.
    """

    def __init__(
        self, store: Any, driver: RecordWire, key: IdempotencyKey, held: Held, finishable: bool
    ) -> None:
        """Made by the store, never by hand."""
        super().__init__(store, driver, key, held, finishable)
        self._lock = threading.Lock()

    @staticmethod
    def current() -> RecordLease | None:
        """The lease of the ``run_once`` operation running in this context, if any."""
        return _CURRENT.get()

    def renew(self) -> int:
        """Move the lease deadline on (to now plus the policy's lease); the new deadline.

        Raises :class:`~mintid.store.RecordLostError` once the key was taken
        over or completed (and :attr:`lost` turns true), or
        :class:`~mintid.store.StoreUnavailableError`.
        """
        with self._lock:
            return run(self._renewing())  # type: ignore[no-any-return]

    def complete(self, response: StoredResponse) -> None:
        """Store the response. A response that cannot be stored (over 1 MiB:
        :class:`~mintid.store.ResponseTooLargeError`; a content type over 255
        bytes or not printable ASCII: :class:`~mintid.store.ResponseNotStorableError`)
        is stored as a final failure and raised.
        """  # noqa: D205
        run(self._finishing(response))

    def fail(
        self, error: str, *, retryable: bool = False, response: StoredResponse | None = None
    ) -> None:
        """Store a failure: final (replayed, or released when errors are not stored)
        or retryable (released).
        """  # noqa: D205
        run(self._finishing(OperationError(error, retryable=retryable, response=response)))


class _Heartbeats:
    """One daemon thread per process that executes the core's heartbeats of the
    ``run_once`` operations under way (``docs/spec.md``, "The heartbeat"): it
    waits out each pause, runs each renewal on a connection of its own and,
    once told an operation returned, sends ``stop``. The schedule, retries and
    stop rules are the core's.
    """  # noqa: D205

    def __init__(self) -> None:
        self._pid = -1
        self._starting = threading.Lock()
        self._cond = threading.Condition()
        self._queue: list[list[Any]] = []
        self._order = itertools.count()

    def forked(self) -> None:
        """In a forked child: the parent's thread is gone, its locks may be held."""
        self._starting = threading.Lock()

    def _start(self) -> None:
        with self._starting:
            if self._pid != os.getpid():
                self._cond, self._queue = threading.Condition(), []
                name = "mintid-record-heartbeat"
                threading.Thread(target=self._run, name=name, daemon=True).start()
                self._pid = os.getpid()

    def add(self, lease: RecordLease) -> list[Any]:
        """Beat for ``lease`` until :meth:`stop`; the handle to stop it."""
        wire, step = lease._heartbeat()
        if self._pid != os.getpid():
            self._start()  # first in this process (or a forked child)
        self._wait(entry := [0.0, 0, lease, wire, False], step)
        return entry

    @staticmethod
    def stop(entry: list[Any]) -> None:
        """The operation returned: the heartbeat stops at its next step."""
        entry[4] = True

    def _wait(self, entry: list[Any], step: bytes) -> None:
        """Wake ``entry`` when its pause ``step`` is over."""
        entry[0] = time.monotonic() + codec.pause_millis(step) / 1000
        entry[1] = next(self._order)
        with self._cond:
            heapq.heappush(self._queue, entry)
            if self._queue[0] is entry:
                self._cond.notify()

    def _run(self) -> None:
        cond, queue = self._cond, self._queue
        while True:
            with cond:
                while not queue or queue[0][0] > time.monotonic():
                    cond.wait(queue[0][0] - time.monotonic() if queue else None)
                entry = heapq.heappop(queue)
            _, _, lease, wire, stopped = entry
            store = lease._store
            clock = store._clock
            step = wire.call(
                codec.tagged(codec.STOP if stopped else codec.RESUME, clock.now_millis())
            )
            try:
                step = drive(store._runner(), clock, wire, step, pauses=False)
            except Exception as error:
                lease._beat_ended(error)
                continue
            if step[0] == codec.YIELD:  # a pause, with the deadline as last renewed
                lease._deadline = codec.beat_deadline(step)
                self._wait(entry, step)
            else:
                lease._beat_ended(step)


_HEARTBEATS: Final = _Heartbeats()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_HEARTBEATS.forked)


class StoreBase:
    """What an idempotency store is, sync or async: its policy, clock, fast
    path and metrics, and the step loops of its three ways in, written once
    and run by :class:`IdempotencyStore` (each call as it is) and
    :class:`mintid.store.aio.AsyncIdempotencyStore` (each call awaited).
    """  # noqa: D205

    _lease_class: Any
    _current: contextvars.ContextVar[Any]

    def __init__(
        self, database: Any, policy: RecordPolicy, clock: Any, fast: Any, metrics: Any
    ) -> None:
        """A store over ``database``."""
        if not isinstance(policy, RecordPolicy):
            raise TypeError(f"policy must be a RecordPolicy, got {type(policy).__name__}")
        self.database = database
        self.policy = policy
        #: Where decisions, latencies, errors and spans are reported.
        self.metrics, self._metrics = recording(metrics)
        self._clock = clock
        self._spec = record_spec(database, policy)
        self._fast = bound(fast, self._fast_class, self._metrics)

    _fast_class: Any

    def _runner(self, raw: Any = None) -> Any:
        """A runner on the pool (or on the caller's ``raw``), reporting to the metrics."""
        return QueryRunner(self.database, raw, self._metrics)

    def _claiming(
        self, runner: Any, way: ffi.Way, key: IdempotencyKey, request: StoreRequest
    ) -> Any:
        """The step loop of a claim on ``key``: its driver and what it handed over
        (a :class:`Held` claim or its end).
        """  # noqa: D205
        self.database.bound()
        driver, step = request_driver(self._spec, self._fast, self._clock, way, key, request)
        with claiming(self._metrics, way) as ended:
            return driver, ended(
                driver.end((yield from driving(runner, self._clock, driver, step)))
            )

    def _ending(self, runner: Any, way: ffi.Way, driver: RecordWire, result: object) -> Any:
        """The step loop that tells the driver what the operation came to and stores it."""
        step = _finish(driver, result, self._clock.now_millis())
        with completing(self._metrics, way, result) as ended:
            return ended(driver.end((yield from driving(runner, self._clock, driver, step))))

    def _complete(
        self, runner: Any, way: ffi.Way, driver: RecordWire, result: object, beat: Any
    ) -> Any:
        """Stop the heartbeat ``beat`` and store ``result``: the end (or its awaitable)."""
        raise NotImplementedError

    def _beat(self, lease: Any) -> Any:
        """Start the heartbeat of ``lease`` (a ``run_once`` claim); its handle."""
        raise NotImplementedError

    def _running(
        self, runner: Any, way: ffi.Way, key: IdempotencyKey, request: StoreRequest, operation: Any
    ) -> Any:
        """The step loop of :meth:`IdempotencyStore.run_once` and
        :meth:`IdempotencyStore.in_transaction` (its ``operation`` given the
        caller's connection already): the claim, the operation (its value, or
        its awaitable), the completion.
        """  # noqa: D205
        driver, held = yield from self._claiming(runner, way, key, request)
        if type(held) is not Held:
            return not_run(held)
        lease = beat = current = None
        if way is ffi.Way.RUN_ONCE:
            lease = self._lease_class(self, driver, key, held, False)
            beat = None if held.renew_every_millis is None else self._beat(lease)
            current = self._current.set(lease)
        try:
            with operating(self._metrics, way):
                response = yield operation()
        except GeneratorExit:
            raise  # CLOSED (mintid._wire)
        except BaseException as error:
            if current is not None:
                self._current.reset(current)
            unrecorded((yield self._complete(runner, way, driver, error, beat)), error)
            raise
        if current is not None:
            self._current.reset(current)
        yield self._complete(runner, way, driver, response, beat)
        return RunResult("execute", response)

    def _claiming_lease(self, key: IdempotencyKey, request: StoreRequest) -> Any:
        """The step loop of :meth:`IdempotencyStore.claim_lease`."""
        driver, held = yield from self._claiming(self._runner(), ffi.Way.LEASE, key, request)
        if type(held) is not Held:
            return not_run(held)
        return self._lease_class(self, driver, key, held, True)

    def _loading(self, key: IdempotencyKey) -> Any:
        """The step loop of :meth:`IdempotencyStore.load`."""
        self.database.bound()
        step = yield from once(self._runner(), self._clock, load_spec(self.database.manifest, key))
        return loaded(step)

    def _cleaning(self, batch_size: int) -> Any:
        """The step loop of :meth:`IdempotencyStore.cleanup`."""
        self.database.bound()
        packed = cleanup_spec(self.database.manifest, batch_size)
        return codec.count((yield from once(self._runner(), self._clock, packed)))


class IdempotencyStore(StoreBase):
    """Idempotency records in one database, under one :class:`~mintid.RecordPolicy`.

    Three ways in, named alike in every mintid language: :meth:`run_once`,
    :meth:`in_transaction` and :meth:`claim_lease`. Thread-safe.
    """

    _lease_class = RecordLease
    _current = _CURRENT
    _fast_class = RedisFastPath

    def __init__(
        self,
        database: Database,
        policy: RecordPolicy,
        *,
        clock: StoreClock | None = None,
        fast_path: RedisFastPath | None = None,
        metrics: StoreMetrics | None = None,
    ) -> None:
        """A store over ``database`` (see :class:`~mintid.store.SqliteDatabase`, …),
        with the Redis fast path in front of ``run_once`` and ``claim_lease``
        when ``fast_path`` is given (:mod:`mintid.store.fast_path`).

        Decisions, latencies, errors and spans go to ``metrics``
        (:class:`~mintid.store.StoreMetrics`, e.g.
        :class:`mintid.metrics.OpenTelemetryMetrics`); by default to
        OpenTelemetry's global providers when ``opentelemetry-api`` is
        importable (no-ops until the app installs an SDK), else nowhere.
        """  # noqa: D205
        used = clock if clock is not None else SystemStoreClock()
        super().__init__(database, policy, used, fast_path, metrics)

    def _beat(self, lease: Any) -> Any:
        return _HEARTBEATS.add(lease)

    def _complete(
        self, runner: Any, way: ffi.Way, driver: RecordWire, result: object, beat: Any
    ) -> Any:
        if beat is not None:
            _HEARTBEATS.stop(beat)
        return run(self._ending(runner, way, driver, result))

    def run_once(
        self,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[], StoredResponse],
    ) -> RunResult:
        """Run ``operation`` once for ``key``: the first request claims the key,
        runs it and stores its response; a duplicate replays what was stored,
        waits for a request in flight (the policy's ``max_wait_millis``) or is
        answered ``in_progress``. While it runs, its lease is renewed in the
        background (:meth:`RecordLease.current` tells the operation whether it
        lost the record). An operation that raises is failed (see
        :class:`OperationError`) and its exception propagates; one that
        returns something that is not a :class:`StoredResponse` releases the
        key and raises :class:`~mintid.store.NotAResponseError`.

        Raises the store's errors (:class:`~mintid.store.StoreUnavailableError`:
        before the claim was written nothing ran; after the operation ran, the
        record stays pending until its lease passes;
        :class:`~mintid.store.ResponseTooLargeError`, …) and
        :class:`~mintid.RecordStaleTokenError` (the lease passed and the key
        was taken over before completion).

        With a fast path, a duplicate may be answered from Redis (a replay of
        what the database committed, or ``in_progress``) without the database.
        """  # noqa: D205
        return run(self._running(self._runner(), ffi.Way.RUN_ONCE, key, request, operation))  # type: ignore[no-any-return]

    def in_transaction(
        self,
        connection: Any,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[Any], StoredResponse],
    ) -> RunResult:
        """:meth:`run_once` inside the caller's transaction on ``connection`` (the
        driver's connection, e.g. from :meth:`Database.transaction`): the claim,
        ``operation``'s writes on the same connection and the completion commit
        or roll back together. An operation that raises leaves the failure to
        the caller's rollback: nothing is stored.
        """  # noqa: D205
        runner, way = self._runner(connection), ffi.Way.SAME_TRANSACTION
        return run(self._running(runner, way, key, request, lambda: operation(connection)))  # type: ignore[no-any-return]

    def claim_lease(self, key: IdempotencyKey, request: StoreRequest) -> RecordLease | RunResult:
        """Claim ``key`` with a lease: a :class:`RecordLease` to complete or fail
        (and renew while it runs), or the :class:`RunResult` of a request that
        does not run. With a fast path, a duplicate may be answered from Redis.
        """  # noqa: D205
        return run(self._claiming_lease(key, request))  # type: ignore[no-any-return]

    def load(self, key: IdempotencyKey) -> StoredRecord | None:
        """The stored record of ``key``, or ``None``."""
        return run(self._loading(key))  # type: ignore[no-any-return]

    def cleanup(self, batch_size: int = 1000) -> int:
        """Delete expired records (a pending one only once its lease passed too),
        ``batch_size`` per statement until a batch comes back short; the total.
        """  # noqa: D205
        return run(self._cleaning(batch_size))  # type: ignore[no-any-return]
