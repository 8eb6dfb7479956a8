"""The transactional outbox for asyncio: :class:`AsyncOutbox`, the async twin
of :class:`mintid.store.Outbox`.

The same core drivers: the relay on the wire, stepped by the one async wire
loop (:func:`mintid._wire.drive_async`); enqueue, load and cleanup are the
sync outbox's own specs and ends, driven by the same loop.
"""  # noqa: D205

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from mintid._outbox import RelayPolicy
from mintid._wire import drive_async, once_async
from mintid._wire_codec import count
from mintid.store._metrics import StoreMetrics
from mintid.store._outbox import (
    ClaimedMessage,
    OutboxBase,
    OutboxMessage,
    RelayReport,
    StoredMessage,
    cleanup_spec,
    enqueue_spec,
    enqueued,
    load_spec,
    loaded,
)
from mintid.store.aio._database import (
    AsyncDatabase,
    AsyncStoreClock,
    async_clock,
    async_database,
    driver_connection,
)
from mintid.store.aio._loop import AsyncQueryRunner, to_the_end

__all__ = ["AsyncOutbox"]


class AsyncOutbox(OutboxBase):
    """:class:`~mintid.store.Outbox` for asyncio: the outbox in one
    :class:`~mintid.store.aio.AsyncDatabase` under one :class:`~mintid.RelayPolicy`,
    with an async ``send``.
    """  # noqa: D205

    database: AsyncDatabase
    _clock: AsyncStoreClock

    def __init__(
        self,
        database: AsyncDatabase,
        policy: RelayPolicy,
        *,
        clock: AsyncStoreClock | None = None,
        draw: Callable[[], int] | None = None,
        metrics: StoreMetrics | None = None,
    ) -> None:
        """An outbox over ``database`` (see :class:`~mintid.store.Outbox`)."""
        super().__init__(async_database(database), policy, async_clock(clock), draw, metrics)

    async def enqueue(
        self, connection: Any, message: OutboxMessage
    ) -> Literal["new", "already_enqueued"]:
        """Insert ``message`` on the caller's async ``connection`` (the driver's, or
        a SQLAlchemy ``AsyncConnection``: :func:`~mintid.store.aio.driver_connection`),
        inside its business transaction (see :meth:`Outbox.enqueue
        <mintid.store.Outbox.enqueue>`).
        """  # noqa: D205
        self.database.bound()
        packed = enqueue_spec(self.database.manifest, message)
        runner = AsyncQueryRunner(self.database, await driver_connection(connection), self._metrics)
        return enqueued(await once_async(runner, self._clock, packed))

    async def relay(self, send: Callable[[ClaimedMessage], Awaitable[None]]) -> RelayReport:
        """:meth:`Outbox.relay <mintid.store.Outbox.relay>` with an async ``send``:
        relay until nothing is due; a ``send`` that raises fails that attempt.
        """  # noqa: D205
        self.database.bound()
        clock = self._clock
        runner = AsyncQueryRunner(self.database, None, self._metrics)
        driver = self._relay_driver()
        try:
            # The relay keeps its connection from send to send: one per relay.
            step = driver.start(clock.now_millis())
            handed = driver.end(await drive_async(runner, clock, driver, step, hold=True))
            while handed[0] == "send":
                try:
                    await send(ClaimedMessage(*handed[1:]))
                except Exception as error:
                    step = self._after_send(driver, error)
                else:
                    step = self._after_send(driver, None)
                # The send has an outcome: its mark is recorded even if this task is
                # cancelled meanwhile (to the next hand-over), then the cancellation
                # propagates. A message left claimed after its send would go again.
                step = await to_the_end(drive_async(runner, clock, driver, step, hold=True))
                handed = driver.end(step)
        finally:
            await runner.release()
        return self._report(handed)

    async def load(self, kind: str, business_key: str) -> StoredMessage | None:
        """The message of ``kind`` and ``business_key``, or ``None``."""
        self.database.bound()
        packed = load_spec(self.database.manifest, kind, business_key)
        runner = AsyncQueryRunner(self.database, None, self._metrics)
        return loaded(await once_async(runner, self._clock, packed))

    async def cleanup(self, sent_before_millis: int, batch_size: int = 1000) -> int:
        """:meth:`Outbox.cleanup <mintid.store.Outbox.cleanup>`, awaited."""
        self.database.bound()
        packed = cleanup_spec(self.database.manifest, sent_before_millis, batch_size)
        runner = AsyncQueryRunner(self.database, None, self._metrics)
        return count(await once_async(runner, self._clock, packed))
