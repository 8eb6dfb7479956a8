"""The transactional outbox over ``outbox_message``, driven by the core's
outbox drivers (``mintid::store::{OutboxEnqueue, OutboxRelay, OutboxCleanup}``):
enqueue in the caller's transaction; :meth:`Outbox.relay` runs the core's
relay loop, calling ``send`` when the core says so. Every rule is the core's.
"""  # noqa: D205

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from mintid._lane import RelayDriver
from mintid._lane import drive as lane_drive
from mintid._native import check_uint, ffi, native_error
from mintid._outbox import RelayPolicy
from mintid._renamed import millis_renamed
from mintid.store._clock import StoreClock, SystemStoreClock
from mintid.store._database import Database, QueryRunner

__all__ = [
    "ClaimedMessage",
    "Outbox",
    "OutboxMessage",
    "RelayReport",
    "StoredMessage",
]

_NativeError = (ffi.MintidError, ffi.InternalError)


@dataclass(frozen=True)
class OutboxMessage:
    """A message to enqueue: one per ``kind`` and ``business_key``."""

    #: Its id (a Snowflake).
    message_id: int
    kind: str
    business_key: str
    payload: bytes


@millis_renamed
@dataclass(frozen=True)
class ClaimedMessage:
    """A message of a claimed batch, handed to ``send``."""

    message_id: int
    kind: str
    business_key: str
    payload: bytes
    #: The sends started so far, this one included.
    attempts: int
    created_millis: int


@millis_renamed
@dataclass(frozen=True)
class StoredMessage:
    """A message as stored."""

    message_id: int
    status: str
    attempts: int
    next_attempt_millis: int
    last_error: str | None


@dataclass(frozen=True)
class RelayReport:
    """What one :meth:`Outbox.relay` run did (the core's ``RelayReport``)."""

    #: Messages sent.
    sent: int = 0
    #: Messages whose send failed, due again after the policy's backoff.
    retried: int = 0
    #: Messages whose last attempt failed: dead.
    dead: int = 0
    #: Messages whose attempts ran out before this claim (relays died sending them): dead unsent.
    given_up: int = 0
    #: Marks that found another relay's claim (``outbox.claim_lost``): counted, the run goes on.
    claim_lost: int = 0
    #: Messages given back unsent because the claim would end first; claimed again.
    released: int = 0


@millis_renamed
class Outbox:
    """The outbox in one database, under one :class:`~mintid.RelayPolicy`. Thread-safe."""

    def __init__(
        self,
        database: Database,
        policy: RelayPolicy,
        *,
        clock: StoreClock | None = None,
        draw: Callable[[], int] | None = None,
    ) -> None:
        """An outbox over ``database``; ``draw`` gives a random u64 per relay run
        (its claim tokens and jitter).
        """  # noqa: D205
        if not isinstance(policy, RelayPolicy):
            raise TypeError(f"policy must be a RelayPolicy, got {type(policy).__name__}")
        self.database = database
        self.policy = policy
        self._clock: StoreClock = clock if clock is not None else SystemStoreClock()
        self._draw = draw if draw is not None else (lambda: secrets.randbits(64))

    def enqueue(
        self, connection: Any, message: OutboxMessage
    ) -> Literal["new", "already_enqueued"]:
        """Insert ``message`` on the caller's ``connection``, inside its business
        transaction; a second message for the same kind and business key is
        ``already_enqueued``, not an error.
        """  # noqa: D205
        runner = QueryRunner(self.database, connection)
        try:
            driver = ffi.OutboxEnqueue(
                self.database.manifest,
                check_uint("message_id", message.message_id),
                message.kind,
                message.business_key,
                message.payload,
            )
            step = driver.start(self._clock.now_millis())
            while isinstance(step, ffi.EnqueueStep.RUN):
                step = driver.push(runner.answer(step.query))
            assert isinstance(step, ffi.EnqueueStep.DONE)
        except _NativeError as error:
            raise native_error(error) from runner.cause
        return "new" if step.enqueued == ffi.Enqueued.NEW else "already_enqueued"

    def relay(self, send: Callable[[ClaimedMessage], None]) -> RelayReport:
        """Relay until nothing is due: the core claims batches, decides before
        each message whether its claim still covers a send, and calls ``send``;
        a ``send`` that raises fails that attempt (its text is stored, cut to
        1024 bytes). What happened, message by message.
        """  # noqa: D205
        clock = self._clock
        runner = QueryRunner(self.database)
        driver = RelayDriver(self.database.manifest, self.policy._to_ffi(), self._draw())
        try:
            # The relay keeps its connection from send to send: one per relay.
            handed = lane_drive(runner, clock, driver, driver.start(clock.now_millis()), hold=True)
            while handed[0] == "send":
                message = ClaimedMessage(*handed[1:])
                try:
                    send(message)
                except Exception as error:
                    step = driver.failed(str(error) or type(error).__name__, clock.now_millis())
                else:
                    step = driver.sent(clock.now_millis())
                handed = lane_drive(runner, clock, driver, step, hold=True)
        finally:
            runner.release()
        return RelayReport(*handed[1:])

    def load(self, kind: str, business_key: str) -> StoredMessage | None:
        """The message of ``kind`` and ``business_key``, or ``None``."""
        runner = QueryRunner(self.database)
        try:
            query = ffi.outbox_load_query(self.database.manifest, kind, business_key)
            stored = ffi.outbox_read_message(runner.answer(query))
        except _NativeError as error:
            raise native_error(error) from runner.cause
        finally:
            runner.release()
        if stored is None:
            return None
        return StoredMessage(
            stored.message_id,
            stored.status,
            stored.attempts,
            stored.next_attempt_millis,
            stored.last_error,
        )

    def cleanup(self, sent_before_millis: int, batch_size: int = 1000) -> int:
        """Delete sent messages last updated at or before ``sent_before_millis``, in
        batches until one comes back short; the total. Dead ones are kept.
        """  # noqa: D205
        runner = QueryRunner(self.database)
        try:
            cleanup = ffi.OutboxCleanup(
                self.database.manifest,
                check_uint("sent_before_millis", sent_before_millis),
                check_uint("batch_size", batch_size),
            )
            step = cleanup.start()
            while isinstance(step, ffi.CleanupStep.RUN):
                step = cleanup.push(runner.answer(step.query))
            assert isinstance(step, ffi.CleanupStep.DONE)
        except _NativeError as error:
            raise native_error(error) from runner.cause
        finally:
            runner.release()
        return int(step.deleted)
