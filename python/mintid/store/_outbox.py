"""The transactional outbox over ``outbox_message``: enqueue in the caller's
transaction, claim due messages (``FOR UPDATE SKIP LOCKED``), send, mark.
The rules are the core's :class:`~mintid.RelayPolicy`.
"""  # noqa: D205

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from mintid._outbox import (
    OUTBOX_ATTEMPTS_EXHAUSTED,
    RelayPolicy,
    check_outbox_marked,
    check_outbox_message,
    outbox_enqueued,
)
from mintid.errors import OutboxClaimLostError
from mintid.store._clock import StoreClock, SystemStoreClock
from mintid.store._database import Database, text

__all__ = [
    "ClaimedMessage",
    "Outbox",
    "OutboxBatch",
    "OutboxMessage",
    "RelayReport",
    "StoredMessage",
]


@dataclass(frozen=True)
class OutboxMessage:
    """A message to enqueue: one per ``kind`` and ``business_key``."""

    #: Its id (a Snowflake).
    message_id: int
    kind: str
    business_key: str
    payload: bytes


@dataclass(frozen=True)
class ClaimedMessage:
    """A message of a claimed batch."""

    message_id: int
    kind: str
    business_key: str
    payload: bytes
    #: The attempts so far, this claim's included.
    attempts: int
    created_ms: int


@dataclass(frozen=True)
class OutboxBatch:
    """The messages one claim took, and its token."""

    claim_token: int
    messages: list[ClaimedMessage]


@dataclass(frozen=True)
class StoredMessage:
    """A message as stored."""

    message_id: int
    status: str
    attempts: int
    next_attempt_ms: int
    last_error: str | None


@dataclass(frozen=True)
class RelayReport:
    """What a :meth:`Outbox.relay` run did."""

    sent: int = 0
    retried: int = 0
    dead: int = 0
    #: Messages whose claim another relay took over before they were marked.
    lost: int = 0


#: What became of a claimed message: sent, due again at a time, dead, or given up unsent.
SendResult = Literal["sent", "dead", "given_up"] | int


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
        """An outbox over ``database``; ``draw`` gives random u64s (claim tokens, jitter)."""
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
        check_outbox_message(message.kind, message.business_key, len(message.payload))
        rows = self.database.execrows(
            connection,
            "outbox_enqueue",
            {
                "message_id": message.message_id,
                "kind": message.kind,
                "business_key": message.business_key,
                "payload": message.payload,
                "now_millis": self._clock.now_ms(),
            },
        )
        return outbox_enqueued(rows)

    def claim(self, draw: int | None = None) -> OutboxBatch:
        """Claim a batch of due messages, oldest due first (none twice across relays)."""
        made = self.policy.claim(self._clock.now_ms(), self._draw() if draw is None else draw)
        db = self.database
        with db.connection() as raw:
            db.execrows(
                raw,
                "outbox_claim",
                {
                    "claim_token": made.claim_token,
                    "claimed_until_millis": made.claimed_until_ms,
                    "now_millis": made.now_ms,
                    "batch_size": made.batch_size,
                },
            )
            rows = db.many(raw, "outbox_claimed", {"claim_token": made.claim_token})
        return OutboxBatch(
            made.claim_token,
            [
                ClaimedMessage(
                    int(row["message_id"]),
                    text(row["kind"]),
                    text(row["business_key"]),
                    bytes(row["payload"]),
                    int(row["attempts"]),
                    int(row["created_millis"]),
                )
                for row in rows
            ],
        )

    def deliver(
        self,
        batch: OutboxBatch,
        message: ClaimedMessage,
        send: Callable[[ClaimedMessage], None],
        draw: int | None = None,
    ) -> SendResult:
        """Send one claimed message and mark it: ``"sent"``; the Unix ms it is due
        again after a failed send (``send`` raised); ``"dead"`` when the attempts
        are used up; ``"given_up"`` when they ran out before this claim (not sent).
        Raises :class:`~mintid.OutboxClaimLostError` when another relay took it.
        """  # noqa: D205
        token = batch.claim_token
        if self.policy.delivery(message.attempts) == "give_up":
            self._mark(message, token, "outbox_mark_dead", last_error=OUTBOX_ATTEMPTS_EXHAUSTED)
            return "given_up"
        try:
            send(message)
        except Exception as error:
            now = self._clock.now_ms()
            draw = self._draw() if draw is None else draw
            next_attempt = self.policy.after_failure(message.attempts, now, draw)
            if next_attempt is None:
                self._mark(message, token, "outbox_mark_dead", last_error=str(error))
                return "dead"
            self._mark(
                message,
                token,
                "outbox_mark_retry",
                last_error=str(error),
                next_attempt_millis=next_attempt,
            )
            return next_attempt
        self._mark(message, token, "outbox_mark_sent")
        return "sent"

    def _mark(self, message: ClaimedMessage, token: int, name: str, **values: Any) -> None:
        params = {
            "message_id": message.message_id,
            "claim_token": token,
            "now_millis": self._clock.now_ms(),
            **values,
        }
        with self.database.connection() as raw:
            rows = self.database.execrows(raw, name, params)
        check_outbox_marked(rows, message.message_id, token)

    def relay(self, send: Callable[[ClaimedMessage], None]) -> RelayReport:
        """Claim and send batches until nothing is due; what happened. A message
        whose claim ran out and was taken over is left to its new relay.
        """  # noqa: D205
        sent = retried = dead = lost = 0
        while True:
            batch = self.claim()
            if not batch.messages:
                return RelayReport(sent, retried, dead, lost)
            for message in batch.messages:
                try:
                    result = self.deliver(batch, message, send)
                except OutboxClaimLostError:
                    lost += 1
                    continue
                if result == "sent":
                    sent += 1
                elif isinstance(result, int):
                    retried += 1
                else:
                    dead += 1

    def load(self, kind: str, business_key: str) -> StoredMessage | None:
        """The message of ``kind`` and ``business_key``, or ``None``."""
        with self.database.connection() as raw:
            row = self.database.one(
                raw, "outbox_load", {"kind": kind, "business_key": business_key}
            )
        if row is None:
            return None
        return StoredMessage(
            int(row["message_id"]),
            text(row["status"]),
            int(row["attempts"]),
            int(row["next_attempt_millis"]),
            text(row["last_error"]),
        )

    def cleanup(self, sent_before_ms: int, batch_size: int = 1000) -> int:
        """Delete sent messages last updated at or before ``sent_before_ms``, in
        batches until one comes back short; the total. Dead ones are kept.
        """  # noqa: D205
        total = 0
        while True:
            with self.database.connection() as raw:
                deleted = self.database.execrows(
                    raw,
                    "outbox_cleanup",
                    {"sent_before_millis": sent_before_ms, "batch_size": batch_size},
                )
            total += deleted
            if deleted < batch_size:
                return total
