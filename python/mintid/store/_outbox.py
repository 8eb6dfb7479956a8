"""The transactional outbox over ``outbox_message``: enqueue in the caller's
transaction, and :meth:`Outbox.relay`, the core's relay driver calling ``send`` when it
says so.
"""  # noqa: D205

from __future__ import annotations

import secrets
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, Literal

from mintid import _wire_codec as codec
from mintid._native import check_uint
from mintid._outbox import RelayPolicy
from mintid._wire import Wire, driving, once, run, spec
from mintid.store._clock import StoreClock, SystemStoreClock
from mintid.store._database import Database, QueryRunner
from mintid.store._metrics import StoreMetrics, recording

__all__ = [
    "ClaimedMessage",
    "Outbox",
    "OutboxBase",
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
    """A message of a claimed batch, handed to ``send``."""

    message_id: int
    kind: str
    business_key: str
    payload: bytes
    #: The sends started so far, this one included.
    attempts: int
    created_millis: int


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
    #: Marks that failed in the database (not a lost claim): counted, the run goes on; the
    #: message stays claimed until its claim ends, then is sent again.
    mark_failed: int = 0


class OutboxBase:
    """What an outbox is, sync or async: its policy, clock, each relay run's
    driver, and the step loops of its calls, written once and run by
    :class:`Outbox` (each call as it is) and :class:`mintid.store.aio.AsyncOutbox`
    (each call awaited).
    """  # noqa: D205

    def __init__(
        self,
        database: Any,
        policy: RelayPolicy,
        clock: Any,
        draw: Callable[[], int] | None,
        metrics: StoreMetrics | None,
    ) -> None:
        """An outbox over ``database``, reporting to ``metrics``."""
        if not isinstance(policy, RelayPolicy):
            raise TypeError(f"policy must be a RelayPolicy, got {type(policy).__name__}")
        self.database = database
        self.policy = policy
        #: Where each relay run's messages and the database errors are reported.
        self.metrics, self._metrics = recording(metrics)
        self._clock = clock
        self._draw = draw if draw is not None else (lambda: secrets.randbits(64))

    def _once(self, kind: int, fields: bytes, raw: Any = None) -> Generator[Any, Any, bytes]:
        """The step loop of the core's driver of ``kind`` (its spec's ``fields``, on the
        caller's ``raw`` connection) to its end.
        """  # noqa: D205
        self.database.bound()
        runner = QueryRunner(self.database, raw, self._metrics)
        return once(runner, self._clock, spec(kind, self.database.manifest, fields))

    def _enqueuing(
        self, raw: Any, message: OutboxMessage
    ) -> Generator[Any, Any, Literal["new", "already_enqueued"]]:
        """The step loop of ``enqueue`` on the caller's ``raw`` connection."""
        fields = codec.u64(check_uint("message_id", message.message_id))
        fields += codec.outbox_key(message.kind, message.business_key) + codec.raw(message.payload)
        step = yield from self._once(codec.ENQUEUE, fields, raw)
        return "already_enqueued" if step[1] else "new"

    def _loading(self, kind: str, business_key: str) -> Generator[Any, Any, StoredMessage | None]:
        """The step loop of ``load``."""
        fields = codec.outbox_key(kind, business_key)
        stored = codec.stored_message((yield from self._once(codec.OUTBOX_LOAD, fields)))
        if stored is None:
            return None
        return StoredMessage(
            stored.message_id,
            stored.status,
            stored.attempts,
            stored.next_attempt_millis,
            stored.last_error,
        )

    def _cleaning(self, sent_before_millis: int, batch_size: int) -> Generator[Any, Any, int]:
        """The step loop of ``cleanup``."""
        fields = codec.u64(check_uint("sent_before_millis", sent_before_millis))
        fields += codec.u64(check_uint("batch_size", batch_size))
        return codec.count((yield from self._once(codec.OUTBOX_CLEANUP, fields)))

    def _marked(self, steps: Generator[Any, Any, bytes]) -> Any:
        """Run the loop that records a send's outcome (in asyncio: to its end, cancelled or not)."""
        raise NotImplementedError

    def _relaying(self, send: Callable[[ClaimedMessage], Any]) -> Generator[Any, Any, RelayReport]:
        """The step loop of :meth:`Outbox.relay`: the core claims, decides and
        marks; ``send`` (its value or awaitable) is called when it says so.
        """  # noqa: D205
        self.database.bound()
        clock = self._clock
        runner = QueryRunner(self.database, None, self._metrics)
        fields = codec.relay_policy(self.policy) + codec.u64(self._draw())
        driver = Wire(spec(codec.RELAY, self.database.manifest, fields))
        try:
            # The relay keeps its connection from send to send: one per relay.
            step = yield from driving(
                runner, clock, driver, driver.start(clock.now_millis()), hold=True
            )
            while step[0] == codec.YIELD:
                try:
                    yield send(ClaimedMessage(*codec.message(step)))
                except Exception as error:
                    text = str(error) or type(error).__name__
                    step = driver.call(codec.send_failed(text, clock.now_millis()))
                else:
                    step = driver.call(codec.tagged(codec.SENT, clock.now_millis()))
                # The send has an outcome: its mark is recorded (in asyncio, even if the task
                # is cancelled meanwhile). A message left claimed after its send would go again.
                step = yield self._marked(driving(runner, clock, driver, step, hold=True))
        except GeneratorExit:
            raise  # CLOSED (mintid._wire)
        except BaseException:
            yield from runner.release()
            raise
        yield from runner.release()
        report = RelayReport(*codec.relay_report(step))
        if self._metrics is not None:
            self._metrics.relayed(report.sent, report.retried, report.dead)
        return report


class Outbox(OutboxBase):
    """The outbox in one database, under one :class:`~mintid.RelayPolicy`. Thread-safe."""

    database: Database

    def __init__(
        self,
        database: Database,
        policy: RelayPolicy,
        *,
        clock: StoreClock | None = None,
        draw: Callable[[], int] | None = None,
        metrics: StoreMetrics | None = None,
    ) -> None:
        """An outbox over ``database``; ``draw`` gives a random u64 per relay run
        (its claim tokens and jitter). Each run's sent, retried and dead
        messages and the database errors go to ``metrics``
        (:class:`~mintid.store.StoreMetrics`; by default OpenTelemetry's global
        providers when ``opentelemetry-api`` is importable, else nowhere).
        """  # noqa: D205
        used = clock if clock is not None else SystemStoreClock()
        super().__init__(database, policy, used, draw, metrics)

    _marked = staticmethod(run)

    def enqueue(
        self, connection: Any, message: OutboxMessage
    ) -> Literal["new", "already_enqueued"]:
        """Insert ``message`` on the caller's ``connection``, inside its business
        transaction; a second message for the same kind and business key is
        ``already_enqueued``, not an error.
        """  # noqa: D205
        return run(self._enqueuing(connection, message))

    def relay(self, send: Callable[[ClaimedMessage], None]) -> RelayReport:
        """Relay until nothing is due: the core claims batches, decides before
        each message whether its claim still covers a send, and calls ``send``;
        a ``send`` that raises fails that attempt (its text is stored, cut to
        1024 bytes). What happened, message by message.
        """  # noqa: D205
        return run(self._relaying(send))

    def load(self, kind: str, business_key: str) -> StoredMessage | None:
        """The message of ``kind`` and ``business_key``, or ``None``."""
        return run(self._loading(kind, business_key))

    def cleanup(self, sent_before_millis: int, batch_size: int = 1000) -> int:
        """Delete sent messages last updated at or before ``sent_before_millis``, in
        batches until one comes back short; the total. Dead ones are kept.
        """  # noqa: D205
        return run(self._cleaning(sent_before_millis, batch_size))
