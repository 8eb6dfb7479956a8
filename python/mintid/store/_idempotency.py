"""The idempotency store: ``run_once``, ``in_transaction`` and ``claim_lease``
over the named queries of ``schema/``.

Every rule is the core's (:func:`mintid.decide`, :meth:`mintid.Record.complete`,
:meth:`mintid.Record.fail`); this module loads rows, runs the SQL a decision
names and reports what happened.
"""  # noqa: D205

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Final, Literal

from mintid._fingerprint import Fingerprint
from mintid._key import IdempotencyKey
from mintid._record import (
    Claim,
    Execute,
    Failure,
    Fence,
    FingerprintMismatch,
    Incoming,
    InProgress,
    KeyTooOld,
    Outcome,
    Problem,
    Record,
    RecordPolicy,
    RecordStatus,
    Replay,
    Wait,
    decide,
)
from mintid.errors import RecordStaleTokenError
from mintid.store._clock import StoreClock, SystemStoreClock
from mintid.store._database import Database, Row, text
from mintid.store._errors import ResponseTooLargeError, StaleSnapshotError

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

#: The largest response stored: 1 MiB (schema/README.md, "Sizes").
MAX_RESPONSE_BYTES: Final = 1_048_576
_MAX_CLAIM_ROUNDS: Final = 100


@dataclass(frozen=True)
class StoredResponse:
    """An operation's response, stored and replayed byte for byte."""

    #: Its content type (at most 255 ASCII bytes).
    content_type: str
    #: Its bytes (at most :data:`MAX_RESPONSE_BYTES`).
    body: bytes


@dataclass(frozen=True)
class StoreRequest:
    """What the store needs about a request besides its key."""

    #: The payload's fingerprint (:func:`mintid.fingerprint`).
    fingerprint: Fingerprint
    #: When the key was created (a verified request ID's time), if known.
    key_created_ms: int | None = None


class OperationError(Exception):
    """Raised by an operation to fail it: a final failure (the default) is
    stored and replayed to duplicates when the policy stores errors; a
    retryable one releases the key. Any other exception an operation raises
    counts as retryable and propagates unchanged.
    """  # noqa: D205

    def __init__(
        self, message: str, *, retryable: bool = False, response: StoredResponse | None = None
    ) -> None:
        """A failure with its message (stored as the record's error, at most 1024 bytes)."""
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
    retry_after_ms: int | None = None


@dataclass(frozen=True)
class StoredRecord:
    """A record as stored: the core's :class:`~mintid.Record` and what it replays."""

    record: Record
    response: StoredResponse | None
    error: str | None


@dataclass(frozen=True)
class _Claimed:
    fence: Fence
    record: Record


_Use = Callable[[], AbstractContextManager[Any]]


def _key_params(key: IdempotencyKey) -> dict[str, Any]:
    return {"scope": key.scope, "kind": key.kind, "key_id": key.id}


def _stored(row: Row) -> StoredRecord:
    body = row["response_body"]
    return StoredRecord(
        Record(
            RecordStatus.parse(text(row["status"])),
            Fingerprint(bytes(row["fingerprint"])),
            int(row["fencing_token"]),
            int(row["lease_deadline_millis"]),
            int(row["created_millis"]),
            int(row["expires_millis"]),
        ),
        None
        if body is None
        else StoredResponse(text(row["response_content_type"]) or "", bytes(body)),
        text(row["error"]),
    )


def _too_large(response: StoredResponse) -> ResponseTooLargeError | None:
    size = len(response.body)
    if size <= MAX_RESPONSE_BYTES:
        return None
    return ResponseTooLargeError(
        f"the response has {size} bytes, more than the {MAX_RESPONSE_BYTES} stored"
    )


class RecordLease:
    """A claim written with a lease ("lease and fence"): complete or fail it
    before :attr:`lease_deadline_ms`; after it, another request may take the
    key over and a late write raises :class:`~mintid.RecordStaleTokenError`.
    """  # noqa: D205

    def __init__(self, store: IdempotencyStore, key: IdempotencyKey, claimed: _Claimed) -> None:
        """Held by :meth:`IdempotencyStore.claim_lease`."""
        self._store = store
        self._key = key
        self._claimed = claimed

    @property
    def token(self) -> int:
        """The fencing token of this claim."""
        return self._claimed.fence.token

    @property
    def lease_deadline_ms(self) -> int:
        """When the lease ends (Unix ms)."""
        return self._claimed.record.lease_deadline_ms

    def complete(self, response: StoredResponse) -> None:
        """Store the response (:class:`~mintid.store.ResponseTooLargeError` above 1 MiB)."""
        self._store._complete(self._key, self._claimed, response)

    def fail(
        self, error: str, *, retryable: bool = False, response: StoredResponse | None = None
    ) -> None:
        """Store a failure: final (replayed, or released when errors are not stored)
        or retryable (released).
        """  # noqa: D205
        self._store._fail(
            self._key, self._claimed, OperationError(error, retryable=retryable, response=response)
        )


class IdempotencyStore:
    """Idempotency records in one database, under one :class:`~mintid.RecordPolicy`.

    Three ways in, named alike in every mintid language: :meth:`run_once`,
    :meth:`in_transaction` and :meth:`claim_lease`. Thread-safe.
    """

    def __init__(
        self, database: Database, policy: RecordPolicy, *, clock: StoreClock | None = None
    ) -> None:
        """A store over ``database`` (see :class:`~mintid.store.SqliteDatabase`, …)."""
        if not isinstance(policy, RecordPolicy):
            raise TypeError(f"policy must be a RecordPolicy, got {type(policy).__name__}")
        self.database = database
        self.policy = policy
        self._clock: StoreClock = clock if clock is not None else SystemStoreClock()

    def run_once(
        self,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[], StoredResponse],
    ) -> RunResult:
        """Run ``operation`` once for ``key``: the first request claims the key,
        runs it and stores its response; a duplicate replays what was stored,
        waits for a request in flight (the policy's ``max_wait_ms``) or is
        answered ``in_progress``. An operation that raises is failed (see
        :class:`OperationError`) and its exception propagates.

        Raises :class:`~mintid.store.StoreUnavailableError` (before the claim
        was written nothing ran; after the operation ran, the record stays
        pending until its lease passes), :class:`~mintid.store.ResponseTooLargeError`
        and :class:`~mintid.RecordStaleTokenError` (the lease passed and the
        key was taken over before completion).
        """  # noqa: D205
        claimed = self._claim(self.database.connection, key, request)
        if isinstance(claimed, RunResult):
            return claimed
        try:
            response = operation()
        except BaseException as error:
            self._fail(key, claimed, error)
            raise
        self._complete(key, claimed, response)
        return RunResult("execute", response)

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

        @contextmanager
        def use() -> Iterator[Any]:
            yield connection

        claimed = self._claim(use, key, request)
        if isinstance(claimed, RunResult):
            return claimed
        response = operation(connection)
        too_large = _too_large(response)
        if too_large is not None:
            raise too_large
        self._write(connection, "complete", key, claimed, _response_params(response))
        return RunResult("execute", response)

    def claim_lease(self, key: IdempotencyKey, request: StoreRequest) -> RecordLease | RunResult:
        """Claim ``key`` with a lease: a :class:`RecordLease` to complete or fail,
        or the :class:`RunResult` of a request that does not run.
        """  # noqa: D205
        claimed = self._claim(self.database.connection, key, request)
        if isinstance(claimed, RunResult):
            return claimed
        return RecordLease(self, key, claimed)

    def load(self, key: IdempotencyKey) -> StoredRecord | None:
        """The stored record of ``key``, or ``None``."""
        with self.database.connection() as raw:
            return self._load(raw, key)

    def cleanup(self, batch_size: int = 1000) -> int:
        """Delete expired records (a pending one only once its lease passed too),
        ``batch_size`` per statement until a batch comes back short; the total.
        """  # noqa: D205
        total = 0
        while True:
            with self.database.connection() as raw:
                params = {"now_millis": self._clock.now_ms(), "batch_size": batch_size}
                deleted = self.database.execrows(raw, "cleanup", params)
            total += deleted
            if deleted < batch_size:
                return total

    def _load(self, raw: Any, key: IdempotencyKey) -> StoredRecord | None:
        row = self.database.one(raw, "load", _key_params(key))
        return None if row is None else _stored(row)

    def _claim(self, use: _Use, key: IdempotencyKey, request: StoreRequest) -> _Claimed | RunResult:
        """Decide and write claims until one is written or the decision is not to run."""
        waited = 0
        loaded = False
        stored: StoredRecord | None = None
        rounds = 0
        while True:
            rounds += 1
            if rounds > _MAX_CLAIM_ROUNDS:
                # Endless lost races mean a snapshot that cannot see the row (MySQL
                # REPEATABLE READ after an earlier read in the caller's transaction).
                raise StaleSnapshotError(
                    f"the claim of {key} neither inserted nor found its record "
                    f"{_MAX_CLAIM_ROUNDS} times: the transaction reads an old snapshot"
                )
            incoming = Incoming(request.fingerprint, request.key_created_ms, waited)
            with use() as raw:
                now = self._clock.now_ms()
                decision = decide(
                    None if stored is None else stored.record, incoming, now, self.policy
                )
                if isinstance(decision, Execute):
                    if self._write_claim(raw, key, decision.claim, now):
                        return _Claimed(decision.claim.fence, decision.claim.record)
                    stored, loaded = self._load(raw, key), True
                    continue
                if not loaded:
                    # A fresh key is claimed in one round trip: the insert goes first.
                    stored, loaded = self._load(raw, key), True
                    continue
            if isinstance(decision, Wait):
                self._clock.pause_ms(decision.poll_ms)
                waited += decision.poll_ms
                with use() as raw:
                    stored = self._load(raw, key)
                rounds = 0
                continue
            return _refusal(decision, stored)

    def _write_claim(self, raw: Any, key: IdempotencyKey, claim: Claim, now: int) -> bool:
        record = claim.record
        params: dict[str, Any] = {
            **_key_params(key),
            "fencing_token": record.token,
            "lease_deadline_millis": record.lease_deadline_ms,
            "now_millis": now,
        }
        expected = claim.expected
        if expected is None:
            params.update(
                fingerprint=record.fingerprint.digest,
                created_millis=record.created_ms,
                expires_millis=record.expires_ms,
            )
            # `claim` returns a row (PostgreSQL, SQLite) or an affected-row count (MySQL).
            if self.database.kind("claim") == ":one":
                return self.database.one(raw, "claim", params) is not None
            return self.database.execrows(raw, "claim", params) == 1
        params.update(
            expected_token=expected.fence.token,
            expected_created_millis=expected.fence.created_ms,
            expected_status=str(expected.status),
        )
        return self.database.execrows(raw, "reclaim", params) == 1

    def _complete(self, key: IdempotencyKey, claimed: _Claimed, response: StoredResponse) -> None:
        too_large = _too_large(response)
        if too_large is not None:
            self._fail(key, claimed, OperationError(too_large.code))
            raise too_large
        with self.database.connection() as raw:
            self._write(raw, "complete", key, claimed, _response_params(response))

    def _fail(self, key: IdempotencyKey, claimed: _Claimed, error: BaseException) -> None:
        final = isinstance(error, OperationError) and not error.retryable
        message = error.message if isinstance(error, OperationError) else str(error)
        after = claimed.record.fail(
            claimed.fence, Failure.FINAL if final else Failure.RETRYABLE, self.policy
        )
        with self.database.connection() as raw:
            if after.status is RecordStatus.FAILED:
                response = error.response if isinstance(error, OperationError) else None
                values = _response_params(response)
                values["error"] = message
                self._write(raw, "fail", key, claimed, values)
            else:
                self._write(raw, "release", key, claimed, {"error": message})

    def _write(
        self, raw: Any, name: str, key: IdempotencyKey, claimed: _Claimed, values: dict[str, Any]
    ) -> None:
        """Run a fenced write; when it changes no row, the core says why."""
        params = {
            **_key_params(key),
            "fencing_token": claimed.fence.token,
            "created_millis": claimed.fence.created_ms,
            "now_millis": self._clock.now_ms(),
            **values,
        }
        if self.database.execrows(raw, name, params) == 1:
            return
        current = self._load(raw, key)
        (claimed.record if current is None else current.record).complete(claimed.fence)
        raise RecordStaleTokenError(
            f"the {name} of token {claimed.fence.token} changed no row: "
            "the record was taken over or removed"
        )


def _response_params(response: StoredResponse | None) -> dict[str, Any]:
    if response is None:
        return {"response_body": None, "response_content_type": None}
    return {"response_body": response.body, "response_content_type": response.content_type}


def _refusal(decision: object, stored: StoredRecord | None) -> RunResult:
    if isinstance(decision, Replay):
        if decision.outcome is Outcome.SUCCEEDED:
            response = stored.response if stored is not None else None
            return RunResult("replay", response or StoredResponse("", b""), decision.outcome)
        return RunResult(
            "replay",
            None if stored is None else stored.response,
            decision.outcome,
            error="" if stored is None or stored.error is None else stored.error,
        )
    if isinstance(decision, InProgress):
        return RunResult(
            "in_progress", problem=decision.problem, retry_after_ms=decision.retry_after_ms
        )
    if isinstance(decision, FingerprintMismatch | KeyTooOld):
        return RunResult(decision.NAME, problem=decision.problem)  # type: ignore[arg-type]
    raise AssertionError(f"unexpected decision {decision!r}")
