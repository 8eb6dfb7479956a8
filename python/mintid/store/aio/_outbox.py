"""The transactional outbox for asyncio: the sync outbox's step loops awaited."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, Literal

from mintid._outbox import RelayPolicy
from mintid._wire import run_async
from mintid.store._metrics import StoreMetrics
from mintid.store._outbox import (
    ClaimedMessage,
    OutboxBase,
    OutboxMessage,
    RelayReport,
    StoredMessage,
)
from mintid.store.aio._database import (
    AsyncDatabase,
    AsyncStoreClock,
    async_clock,
    async_database,
    driver_connection,
)
from mintid.store.aio._loop import to_the_end

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

    def _marked(self, steps: Generator[Any, Any, bytes]) -> Any:
        return to_the_end(run_async(steps))

    async def enqueue(
        self, connection: Any, message: OutboxMessage
    ) -> Literal["new", "already_enqueued"]:
        """Insert ``message`` on the caller's async ``connection`` (the driver's, or
        a SQLAlchemy ``AsyncConnection``: :func:`~mintid.store.aio.driver_connection`),
        inside its business transaction (see :meth:`Outbox.enqueue
        <mintid.store.Outbox.enqueue>`).
        """  # noqa: D205
        return await run_async(self._enqueuing(await driver_connection(connection), message))

    async def relay(self, send: Callable[[ClaimedMessage], Awaitable[None]]) -> RelayReport:
        """:meth:`Outbox.relay <mintid.store.Outbox.relay>` with an async ``send``:
        relay until nothing is due; a ``send`` that raises fails that attempt.
        """  # noqa: D205
        return await run_async(self._relaying(send))

    async def load(self, kind: str, business_key: str) -> StoredMessage | None:
        """The message of ``kind`` and ``business_key``, or ``None``."""
        return await run_async(self._loading(kind, business_key))

    async def cleanup(self, sent_before_millis: int, batch_size: int = 1000) -> int:
        """:meth:`Outbox.cleanup <mintid.store.Outbox.cleanup>`, awaited."""
        return await run_async(self._cleaning(sent_before_millis, batch_size))
