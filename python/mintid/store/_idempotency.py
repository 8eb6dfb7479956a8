"""The idempotency store: ``run_once``, ``in_transaction`` and ``claim_lease``, each
executing the core's record driver, and the thread that runs the core's heartbeats.
"""  # noqa: D205

from __future__ import annotations

import contextvars
import heapq
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, Final, Literal

from mintid import _wire_codec as codec
from mintid._fingerprint import Fingerprint
from mintid._key import IdempotencyKey
from mintid._native import check_uint, ffi
from mintid._record import Outcome, Problem, Record, RecordPolicy, RecordStatus
from mintid._wire import SharedWire, Wire, answered, driving, once, run, spec
from mintid._wire_codec import Finished, Held
from mintid.errors import MintidError, error_class
from mintid.store._clock import StoreClock, SystemStoreClock
from mintid.store._database import Database, QueryRunner
from mintid.store._errors import RecordLostError
from mintid.store._metrics import StoreMetrics, measured, operating, recording
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
_OUTCOMES: Final = (Outcome.SUCCEEDED, Outcome.FAILED)
_PROBLEMS: Final = {
    "in_progress": Problem.IN_PROGRESS,
    "fingerprint_mismatch": Problem.FINGERPRINT_MISMATCH,
    "key_too_old": Problem.KEY_TOO_OLD,
}
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


@dataclass(frozen=True)
class StoredRecord:
    """A record as stored: the core's :class:`~mintid.Record` and what it replays."""

    record: Record
    response: StoredResponse | None
    error: str | None


def _response(packed: tuple[str, bytes] | None) -> StoredResponse | None:
    return None if packed is None else StoredResponse(*packed)


def _finish(result: object, now_millis: int) -> bytes:
    """What the operation came to (its return value or the exception it raised), packed;
    the text stored for an exception is the core's, from its type's name and message.
    """  # noqa: D205
    if isinstance(result, StoredResponse):
        return codec.finish_succeeded(result.content_type, result.body, now_millis)
    if isinstance(result, OperationError):
        response = result.response
        stored = None if response is None else (response.content_type, response.body)
        return codec.finish_failed(result.message, result.retryable, stored, now_millis)
    if isinstance(result, BaseException):
        return codec.finish_raised(type(result).__name__, str(result), now_millis)
    return codec.finish_not_a_response(type(result).__name__, now_millis)


def _body_bytes(result: object) -> int | None:
    """The size of the response an operation's ``result`` gives the store to keep, if any."""
    stored = result.response if isinstance(result, OperationError) else result
    return len(stored.body) if isinstance(stored, StoredResponse) else None


def _unrecorded(finished: Finished, error: BaseException) -> None:
    """When the core says the operation's failure ``error`` could not be recorded
    (``docs/spec.md``, "Which error the caller sees"): the store error is attached to
    ``error`` (a note, and ``__context__``) and logged; the caller re-raises ``error``.
    """  # noqa: D205
    if finished[1] != "operation_failed_unrecorded":
        return
    code, message = finished[2], finished[3]
    add_note = getattr(error, "add_note", None)  # Python 3.11+
    if add_note is not None:
        add_note(f"mintid: the failure was not recorded: {code}: {message}")
    error.__context__ = error_class(code)(message, code)
    _LOG.warning("mintid: an operation's failure was not recorded: %s: %s", code, message)


def _not_run(finished: Finished) -> RunResult:
    """The result of a request the core did not run (its decision and end the core's)."""
    decision, end, *fields = finished
    if end == "replay":
        outcome, response, error = fields
        return RunResult(decision, _response(response), _OUTCOMES[outcome], error=error)
    retry_after = fields[0] if end == "in_progress" else None
    return RunResult(decision, problem=_PROBLEMS[end], retry_after_millis=retry_after)


def _checked_key(key: IdempotencyKey) -> bytes:
    """``key`` (checked to be an :class:`~mintid.IdempotencyKey`) as a spec carries it."""
    if not isinstance(key, IdempotencyKey):
        raise TypeError(f"key must be an IdempotencyKey, got {type(key).__name__}")
    return codec.key(key.kind, key.scope, key.id)


class LeaseBase:
    """A claim on a key, sync or async: its token and deadline, and the step loops of
    its renewal, heartbeat and completion (run by :class:`RecordLease` and
    :class:`mintid.store.aio.AsyncRecordLease`).
    """  # noqa: D205

    def __init__(
        self, store: Any, driver: Wire, key: IdempotencyKey, held: Held, finishable: bool
    ) -> None:
        """Made by a store, never by hand."""
        self._store = store
        self._driver = driver
        self._metrics = store._metrics
        self._key = key
        self._held = held
        self._finishable = finishable
        self._deadline: int = held.lease_deadline_millis
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

    def _wire(self, kind: int, made: type[Wire] = Wire) -> Wire:
        """The core's renewal or heartbeat (``kind``) of this claim."""
        store = self._store
        head = spec(kind, store.database.manifest)
        policy = codec.record_policy(store.policy)
        return made(codec.renewal_spec(head, policy, _checked_key(self._key), self._held))

    def _beat_ended(self, end: bytes | BaseException) -> None:
        """The heartbeat's end: the deadline as last renewed, or the core's failure (the
        key taken over or completed, the lease run out, …): the record is no longer held.
        """  # noqa: D205
        if isinstance(end, BaseException) or end[0] == codec.FAIL:
            self._lost_now()
        else:
            self._deadline = codec.count(end)

    def _paused(self, end: bytes | BaseException) -> bool:
        """Whether the heartbeat's ``end`` is a pause (its ``YIELD``: the deadline as last
        renewed, taken) rather than its end.
        """  # noqa: D205
        if isinstance(end, BaseException) or end[0] != codec.YIELD:
            return False
        self._deadline = codec.beat_deadline(end)
        return True

    def _beating(self, wire: Wire) -> Generator[Any, Any, bytes | BaseException]:
        """The step loop of one beat of the heartbeat ``wire``: the next pause, its end, or
        the core's failure. A host error while it runs a step (an exception out of the
        loop that is not the core's) is pushed as a failed answer: the core decides.
        """  # noqa: D205
        store = self._store
        clock = store._clock
        packed = None
        while True:
            try:
                step = wire.call(packed or codec.tagged(codec.RESUME, clock.now_millis()))
                return (yield from driving(store._runner(), clock, wire, step))
            except MintidError as error:
                return error
            except Exception as error:
                _LOG.warning("mintid: a record heartbeat's step failed", exc_info=error)
                try:
                    kind = store.database.classify(error)
                except Exception:
                    kind = ffi.DbErrorClass.OTHER
                # The system clock: the store's may be what failed.
                now = time.time_ns() // 1_000_000
                packed = answered((kind, f"{type(error).__name__}: {error}"), now)

    def _lost_now(self) -> None:
        """A renewal found the key taken over or completed."""
        self._lost = True
        if self._metrics is not None:
            self._metrics.record_lost()

    def _renewing(self) -> Generator[Any, Any, int]:
        """The step loop of one renewal (one wire for every renewal); the new deadline."""
        store = self._store
        store.database.bound()
        if self._renewal is None:
            self._renewal = self._wire(codec.RECORD_RENEWAL)
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

    def _finishing(self, result: object) -> Generator[Any, Any, Any]:
        """The step loop that stores ``result`` (a response or an :class:`OperationError`)."""
        if not self._finishable:
            raise TypeError("run_once completes its own lease: return or raise instead")
        store = self._store
        store.database.bound()
        return (yield from store._ending(store._runner(), ffi.Way.LEASE, self._driver, result))


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
        self, store: Any, driver: Wire, key: IdempotencyKey, held: Held, finishable: bool
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
            return run(self._renewing())

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


class _Beat:
    """One heartbeat in the queue: its lease and wire, until it ends."""

    __slots__ = ("lease", "lock", "wire")

    def __init__(self, lease: RecordLease) -> None:
        self.lease: RecordLease | None = lease
        #: Stepped by the heartbeat's thread, stopped by the operation's.
        self.wire = lease._wire(codec.HEARTBEAT, SharedWire)
        self.lock = threading.Lock()

    def end(self, end: bytes | BaseException) -> None:
        """The heartbeat ended (the first end counts): its lease learns how, the queue
        lets it go.
        """  # noqa: D205
        with self.lock:
            lease, self.lease = self.lease, None
        if lease is not None:
            lease._beat_ended(end)


class _Heartbeats:
    """One daemon thread per process that runs the core's heartbeats of the ``run_once``
    operations under way (``docs/spec.md``, "The heartbeat"): it waits out each pause
    and runs each beat on a connection of its own; the operation's end stops its
    heartbeat at once. The schedule, retries and stop rule are the core's.
    """  # noqa: D205

    def __init__(self) -> None:
        self._pid = -1
        self._starting = threading.Lock()
        self._cond = threading.Condition()
        self._queue: list[tuple[float, int, _Beat]] = []
        self._order = itertools.count()

    def forked(self) -> None:
        """In a forked child: the parent's thread is gone, its locks may be held."""
        self._starting = threading.Lock()

    def add(self, lease: RecordLease) -> _Beat:
        """Beat for ``lease`` until :meth:`stop`; the handle to stop it."""
        beat = _Beat(lease)
        if self._pid != os.getpid():
            with self._starting:  # first in this process (or a forked child)
                if self._pid != os.getpid():
                    self._cond, self._queue = threading.Condition(), []
                    name = "mintid-record-heartbeat"
                    threading.Thread(target=self._run, name=name, daemon=True).start()
                    self._pid = os.getpid()
        self._next(beat, lease, beat.wire.start(lease._store._clock.now_millis()))
        return beat

    @staticmethod
    def stop(beat: _Beat) -> None:
        """The operation returned: the core's ``stop``, now (a beat in flight is not waited
        for: its answer changes nothing), and the queue lets the heartbeat go.
        """  # noqa: D205
        lease = beat.lease
        if lease is not None:
            beat.end(beat.wire.call(codec.tagged(codec.STOP, lease._store._clock.now_millis())))

    def _next(self, beat: _Beat, lease: RecordLease, step: bytes | BaseException) -> None:
        """Queue ``beat`` until its pause ``step`` is over, or end it."""
        if not lease._paused(step):
            beat.end(step)
            return
        assert isinstance(step, bytes)
        wake = time.monotonic() + codec.pause_millis(step) / 1000
        with self._cond:
            heapq.heappush(self._queue, (wake, next(self._order), beat))
            if self._queue[0][2] is beat:
                self._cond.notify()

    def _run(self) -> None:
        cond, queue = self._cond, self._queue
        while True:
            with cond:
                while not queue or queue[0][0] > time.monotonic():
                    cond.wait(queue[0][0] - time.monotonic() if queue else None)
                beat = heapq.heappop(queue)[2]
            wire, lease = beat.wire, beat.lease
            if lease is not None:  # not stopped meanwhile
                self._next(beat, lease, run(lease._beating(wire)))


_HEARTBEATS: Final = _Heartbeats()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_HEARTBEATS.forked)


class StoreBase:
    """An idempotency store, sync or async: its policy, clock, fast path and metrics,
    and the step loops of its three ways in, written once and run by
    :class:`IdempotencyStore` (each call as it is) and
    :class:`mintid.store.aio.AsyncIdempotencyStore` (each call awaited).
    """  # noqa: D205

    _lease_class: Any
    _current: contextvars.ContextVar[Any]
    _fast_class: Any

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
        self._spec = spec(codec.RECORD, database.manifest, codec.record_policy(policy))
        self._fast = bound(fast, self._fast_class, self._metrics)

    def _runner(self, raw: Any = None) -> Any:
        """A runner on the pool (or on the caller's ``raw``), reporting to the metrics."""
        return QueryRunner(self.database, raw, self._metrics)

    def _claiming(
        self, runner: Any, way: ffi.Way, key: IdempotencyKey, request: StoreRequest
    ) -> Generator[Any, Any, tuple[Wire, Any]]:
        """The step loop of a claim on ``key``: its driver and what it handed over
        (a :class:`Held` claim or its end).
        """  # noqa: D205
        self.database.bound()
        fast, created = self._fast, request.key_created_millis
        driver = Wire(
            codec.record_spec(
                self._spec,
                b"",
                _WAYS[way],
                fast is not None,
                None if fast is None else fast.ttl_millis,
                _checked_key(key),
                request.fingerprint.digest,
                None if created is None else check_uint("key_created_millis", created),
            ),
            fast,
        )
        step = driver.start(self._clock.now_millis())
        with measured(self._metrics, way) as ended:
            return driver, ended(
                codec.record_end((yield from driving(runner, self._clock, driver, step)))
            )

    def _ending(
        self, runner: Any, way: ffi.Way, driver: Wire, result: object
    ) -> Generator[Any, Any, Any]:
        """The step loop that tells the driver what the operation came to and stores it."""
        step = driver.call(_finish(result, self._clock.now_millis()))
        with measured(self._metrics, way, True, _body_bytes(result)) as ended:
            return ended(codec.record_end((yield from driving(runner, self._clock, driver, step))))

    #: Start the heartbeat of a ``run_once`` lease; its handle.
    _beat: Callable[[Any], Any]
    #: Stop the heartbeat (if any) and store the operation's result: the end, or its awaitable.
    _complete: Callable[[Any, ffi.Way, Wire, object, Any], Any]

    def _running(
        self, runner: Any, way: ffi.Way, key: IdempotencyKey, request: StoreRequest, operation: Any
    ) -> Generator[Any, Any, RunResult]:
        """The step loop of ``run_once`` and ``in_transaction`` (its ``operation`` given
        the caller's connection already): the claim, the operation (its value, or its
        awaitable), the completion.
        """  # noqa: D205
        driver, held = yield from self._claiming(runner, way, key, request)
        if type(held) is not Held:
            return _not_run(held)
        beat = current = None
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
            _unrecorded((yield self._complete(runner, way, driver, error, beat)), error)
            raise
        if current is not None:
            self._current.reset(current)
        yield self._complete(runner, way, driver, response, beat)
        return RunResult("execute", response)

    def _claiming_lease(
        self, key: IdempotencyKey, request: StoreRequest
    ) -> Generator[Any, Any, Any]:
        """The step loop of ``claim_lease``."""
        driver, held = yield from self._claiming(self._runner(), ffi.Way.LEASE, key, request)
        if type(held) is not Held:
            return _not_run(held)
        return self._lease_class(self, driver, key, held, True)

    def _loading(self, key: IdempotencyKey) -> Generator[Any, Any, StoredRecord | None]:
        """The step loop of ``load``."""
        self.database.bound()
        packed = spec(codec.RECORD_LOAD, self.database.manifest, _checked_key(key))
        stored = codec.stored_record((yield from once(self._runner(), self._clock, packed)))
        if stored is None:
            return None
        status, fingerprint, *times, response, error = stored
        record = Record(RecordStatus[status.upper()], Fingerprint._of_core(fingerprint), *times)
        return StoredRecord(record, _response(response), error)

    def _cleaning(self, batch_size: int) -> Generator[Any, Any, int]:
        """The step loop of ``cleanup``."""
        self.database.bound()
        batch = codec.u64(check_uint("batch_size", batch_size))
        packed = spec(codec.RECORD_CLEANUP, self.database.manifest, batch)
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

    def _complete(self, runner: Any, way: ffi.Way, driver: Wire, result: object, beat: Any) -> Any:
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
        return run(self._running(self._runner(), ffi.Way.RUN_ONCE, key, request, operation))

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
        return run(self._running(runner, way, key, request, lambda: operation(connection)))

    def claim_lease(self, key: IdempotencyKey, request: StoreRequest) -> RecordLease | RunResult:
        """Claim ``key`` with a lease: a :class:`RecordLease` to complete or fail
        (and renew while it runs), or the :class:`RunResult` of a request that
        does not run. With a fast path, a duplicate may be answered from Redis.
        """  # noqa: D205
        return run(self._claiming_lease(key, request))  # type: ignore[no-any-return]

    def load(self, key: IdempotencyKey) -> StoredRecord | None:
        """The stored record of ``key``, or ``None``."""
        return run(self._loading(key))

    def cleanup(self, batch_size: int = 1000) -> int:
        """Delete expired records (a pending one only once its lease passed too),
        ``batch_size`` per statement until a batch comes back short; the total.
        """  # noqa: D205
        return run(self._cleaning(batch_size))
