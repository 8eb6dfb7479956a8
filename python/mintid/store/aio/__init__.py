"""The stores for asyncio: :class:`AsyncIdempotencyStore`, and the worker-id
leases, segment IDs and outbox (:class:`AsyncWorkerLeases`,
:class:`AsyncLeasedSnowflake`, :class:`AsyncSegmentIds`, :class:`AsyncOutbox`),
with executors for psycopg 3 (``AsyncConnection``, or the app's
``psycopg_pool.AsyncConnectionPool``), asyncpg (``mintid[asyncpg]``), asyncmy
(``mintid[asyncmy]``) and SQLite (aiosqlite, ``mintid[aiosqlite]``).

The same three ways in as :class:`~mintid.store.IdempotencyStore`, with the
same names, arguments, defaults, results and errors, spelled ``async``: each
store's step loops are the sync store's, written once as generators
(:func:`mintid._wire.run_async` awaits each call they make).

SQLite runs through aiosqlite (``mintid[aiosqlite]``), not a bare thread
executor: a connection of the caller's transaction must take the caller's
own writes without blocking the loop (aiosqlite's connection is awaitable),
and each aiosqlite connection has one thread that runs its statements in
order, so a task cancelled mid-statement never has its connection closed
under a statement still running. Its errors are ``sqlite3``'s, classified
as the sync executor does.

A store and its database are bound to one event loop and one process (their
connections are): using them from another loop, or in a forked child,
raises :class:`LoopBindingError`.
"""  # noqa: D205

from mintid.store._errors import LoopBindingError
from mintid.store.aio._database import (
    AsyncDatabase,
    AsyncMySqlDatabase,
    AsyncpgDatabase,
    AsyncPostgresDatabase,
    AsyncSqliteDatabase,
    AsyncStoreClock,
    AsyncSystemStoreClock,
    driver_connection,
)
from mintid.store.aio._idempotency import AsyncIdempotencyStore, AsyncRecordLease
from mintid.store.aio._ids import AsyncLeasedSnowflake, AsyncSegmentIds, AsyncWorkerLeases
from mintid.store.aio._outbox import AsyncOutbox

__all__ = [
    "AsyncDatabase",
    "AsyncIdempotencyStore",
    "AsyncLeasedSnowflake",
    "AsyncMySqlDatabase",
    "AsyncOutbox",
    "AsyncPostgresDatabase",
    "AsyncRecordLease",
    "AsyncSegmentIds",
    "AsyncSqliteDatabase",
    "AsyncStoreClock",
    "AsyncSystemStoreClock",
    "AsyncWorkerLeases",
    "AsyncpgDatabase",
    "LoopBindingError",
    "driver_connection",
]
