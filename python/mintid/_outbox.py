"""The transactional outbox: what a relay checks, claims, sends and retries."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final, Literal

from mintid._native import call, check_uint, ffi

__all__ = [
    "OUTBOX_ATTEMPTS_EXHAUSTED",
    "BatchClaim",
    "OutboxStatus",
    "RelayPolicy",
    "check_outbox_marked",
    "check_outbox_message",
    "outbox_enqueued",
]

#: The ``last_error`` a relay writes when it gives a message up unsent.
OUTBOX_ATTEMPTS_EXHAUSTED: Final[str] = call(ffi.outbox_attempts_exhausted_error)


class OutboxStatus(enum.Enum):
    """The status of an outbox message; ``str()`` gives the stored text."""

    PENDING = ffi.OutboxStatus.PENDING
    SENT = ffi.OutboxStatus.SENT
    DEAD = ffi.OutboxStatus.DEAD

    @classmethod
    def parse(cls, text: str) -> OutboxStatus:
        """Read a stored status text."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return cls(call(ffi.outbox_status_parse, text))

    def __str__(self) -> str:
        """The stored text."""
        return call(ffi.outbox_status_text, self.value)


@dataclass(frozen=True)
class BatchClaim:
    """The claim of a batch: the parameters of ``outbox_claim``."""

    claim_token: int
    claimed_until_millis: int
    batch_size: int
    now_millis: int


@dataclass(frozen=True, init=False)
class RelayPolicy:
    """How a relay claims and retries messages; values left out keep the
    core's defaults (batches of 100 claimed for 60 s, backoff from 1 s to
    10 min with 50 % jitter, 10 attempts).
    """  # noqa: D205

    batch_size: int
    claim_millis: int
    base_backoff_millis: int
    max_backoff_millis: int
    jitter_percent: int
    max_attempts: int

    def __init__(
        self,
        batch_size: int | None = None,
        claim_millis: int | None = None,
        *,
        base_backoff_millis: int | None = None,
        max_backoff_millis: int | None = None,
        jitter_percent: int | None = None,
        max_attempts: int | None = None,
    ) -> None:
        """Check the policy with the core and hold its values."""
        made = call(
            ffi.outbox_relay_policy_new,
            None if batch_size is None else check_uint("batch_size", batch_size),
            None if claim_millis is None else check_uint("claim_millis", claim_millis),
            None
            if base_backoff_millis is None
            else check_uint("base_backoff_millis", base_backoff_millis),
            None
            if max_backoff_millis is None
            else check_uint("max_backoff_millis", max_backoff_millis),
            None if jitter_percent is None else check_uint("jitter_percent", jitter_percent, 8),
            None if max_attempts is None else check_uint("max_attempts", max_attempts),
        )
        for name, value in (
            ("batch_size", made.batch_size),
            ("claim_millis", made.claim_millis),
            ("base_backoff_millis", made.base_backoff_millis),
            ("max_backoff_millis", made.max_backoff_millis),
            ("jitter_percent", made.jitter_percent),
            ("max_attempts", made.max_attempts),
        ):
            object.__setattr__(self, name, value)

    def _to_ffi(self) -> ffi.RelayPolicy:
        return ffi.RelayPolicy(
            batch_size=self.batch_size,
            claim_millis=self.claim_millis,
            base_backoff_millis=self.base_backoff_millis,
            max_backoff_millis=self.max_backoff_millis,
            jitter_percent=self.jitter_percent,
            max_attempts=self.max_attempts,
        )

    def backoff_millis(self, attempts: int, draw: int) -> int:
        """The pause after the ``attempts``-th failure, given a random ``draw`` (a u64)."""
        return call(
            ffi.outbox_backoff_millis,
            self._to_ffi(),
            check_uint("attempts", attempts),
            check_uint("draw", draw),
        )

    def claim(self, now_millis: int, draw: int) -> BatchClaim:
        """The claim of a batch at ``now_millis``, its token from a random ``draw``."""
        made = call(
            ffi.outbox_claim,
            self._to_ffi(),
            check_uint("now_millis", now_millis),
            check_uint("draw", draw),
        )
        return BatchClaim(
            made.claim_token, made.claimed_until_millis, made.batch_size, made.now_millis
        )

    def delivery(self, attempts: int) -> Literal["send", "give_up"]:
        """Whether to send a claimed message whose ``attempts`` counts this claim."""
        made = call(ffi.outbox_delivery, self._to_ffi(), check_uint("attempts", attempts))
        return "send" if made == ffi.Delivery.SEND else "give_up"

    def after_failure(self, attempts: int, now_millis: int, draw: int) -> int | None:
        """After a failed send: the Unix ms of the next attempt, or ``None``: mark it dead."""
        made = call(
            ffi.outbox_after_failure,
            self._to_ffi(),
            check_uint("attempts", attempts),
            check_uint("now_millis", now_millis),
            check_uint("draw", draw),
        )
        next_attempt: int | None = getattr(made, "next_attempt_millis", None)
        return next_attempt


def outbox_enqueued(rows: int) -> Literal["new", "already_enqueued"]:
    """Read the affected-row count of ``outbox_enqueue``."""
    made = call(ffi.outbox_enqueued, check_uint("rows", rows))
    return "new" if made == ffi.Enqueued.NEW else "already_enqueued"


def check_outbox_marked(rows: int, message_id: int, claim_token: int) -> None:
    """Raise unless a mark of ``message_id`` under ``claim_token`` changed one row."""
    call(
        ffi.outbox_check_marked,
        check_uint("rows", rows),
        check_uint("message_id", message_id),
        check_uint("claim_token", claim_token),
    )


def check_outbox_message(kind: str, business_key: str, payload_len: int) -> None:
    """Raise unless a message may be enqueued."""
    if not isinstance(kind, str) or not isinstance(business_key, str):
        raise TypeError("kind and business_key must be str")
    call(ffi.outbox_check_message, kind, business_key, check_uint("payload_len", payload_len))
