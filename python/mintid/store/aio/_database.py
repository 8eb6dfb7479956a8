"""The asyncio executors: :class:`AsyncDatabase` (a small pool of one driver's
connections) for psycopg 3, asyncpg, asyncmy and aiosqlite, the async clock, and
:func:`driver_connection` (the driver's connection under an app's SQLAlchemy one).
"""  # noqa: D205

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Protocol, TypeVar

from mintid._native import ffi
from mintid._wire import migrating, run_async
from mintid.store._database import (
    Class,
    DatabaseBase,
    Dialect,
    QueryRunner,
    SqliteDatabase,
    mysql_classifier,
    mysql_connect_kwargs,
    postgres_class,
    postgres_state_class,
)
from mintid.store._errors import LoopBindingError, StoreUnavailableError

T = TypeVar("T")
Rows = list[tuple[Any, ...]]


class AsyncStoreClock(Protocol):
    """The async store's clock: Unix milliseconds, and an awaited pause."""

    def now_millis(self) -> int:
        """The time in Unix milliseconds."""
        ...

    async def pause_millis(self, millis: int) -> None:
        """Wait ``millis`` milliseconds (without blocking the loop)."""
        ...


class AsyncSystemStoreClock:
    """The system clock and :func:`asyncio.sleep`."""

    def now_millis(self) -> int:
        """The wall clock in Unix milliseconds."""
        return time.time_ns() // 1_000_000

    async def pause_millis(self, millis: int) -> None:
        """Sleep ``millis`` milliseconds."""
        await asyncio.sleep(millis / 1000)


def async_database(database: AsyncDatabase) -> AsyncDatabase:
    """``database``, checked to be an :class:`AsyncDatabase`."""
    if not isinstance(database, AsyncDatabase):
        raise TypeError(f"database must be an AsyncDatabase, got {type(database).__name__}")
    return database


def async_clock(clock: AsyncStoreClock | None) -> AsyncStoreClock:
    """``clock`` (checked: its ``pause_millis`` a coroutine function), or the system's."""
    if clock is None:
        return AsyncSystemStoreClock()
    if not inspect.iscoroutinefunction(clock.pause_millis):
        raise TypeError("clock must be an AsyncStoreClock (its pause_millis a coroutine function)")
    return clock


class AsyncDatabase(DatabaseBase):
    """One database of one dialect for asyncio: a small pool of the driver's
    connections (autocommit), the core's statements, and their executor.
    Bound to the event loop and process of its first use; use a subclass.
    """  # noqa: D205

    def __init__(
        self,
        dialect: Dialect,
        placeholder: ffi.Placeholder,
        classify: Callable[[BaseException], ffi.DbErrorClass],
        *,
        max_idle: int = 16,
    ) -> None:
        """Set up the pool; nothing connects until first used."""
        super().__init__(dialect, placeholder, classify, max_idle)
        self._loop: asyncio.AbstractEventLoop | None = None

    def bound(self) -> None:
        """Check that this runs in the loop and process of the first use (binding it then)."""
        loop = asyncio.get_running_loop()
        if self._pid != os.getpid():
            raise LoopBindingError(
                "an async mintid store was used in a forked child: make a new one there"
            )
        if self._loop is None:
            self._loop = loop
        elif self._loop is not loop:
            raise LoopBindingError(
                "an async mintid store was used from another event loop: make one per loop"
            )

    # What each driver provides.

    async def _connect(self) -> Any:
        raise NotImplementedError

    async def _close(self, raw: Any) -> None:
        raise NotImplementedError

    async def _give_back(self, raw: Any) -> bool:
        """Hand ``raw`` to a pool of the app's (``True``), or keep it here (``False``)."""
        return False

    async def _execute(self, raw: Any, sql: str, params: Any, rows: bool) -> Rows | int:
        """Run ``sql`` through a DB-API-like async cursor (psycopg, asyncmy): its rows
        when ``rows``, else its affected-row count.
        """  # noqa: D205
        async with raw.cursor() as cursor:
            await cursor.execute(sql, params)
            return list(await cursor.fetchall()) if rows else max(int(cursor.rowcount), 0)

    # The pool.

    async def _checkout(self) -> Any:
        self.bound()
        if self._idle:
            return self._idle.pop()
        return await self._connect()

    async def _discard(self, raw: Any, _pid: int) -> None:
        """Close a broken connection."""
        await self._close_quietly(raw)

    async def _checkin(self, raw: Any, _pid: int = 0) -> None:
        if await self._give_back(raw):
            return
        if len(self._idle) < self._max_idle:
            self._idle.append(raw)
            return
        await self._close_quietly(raw)

    async def _close_quietly(self, raw: Any) -> None:
        # A broken connection may fail to close; it is gone anyway.
        with contextlib.suppress(Exception):
            await self._close(raw)

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Any]:
        """A driver connection in autocommit mode, back to the pool afterwards
        (closed instead when the block raised).
        """  # noqa: D205
        try:
            raw = await self._checkout()
        except LoopBindingError:
            raise
        except Exception as error:
            raise self._unavailable() from error
        try:
            yield raw
        except BaseException:
            await self._close_quietly(raw)
            raise
        await self._checkin(raw)

    @asynccontextmanager
    async def transaction(self, *, write: bool = False) -> AsyncIterator[Any]:
        """A driver connection inside a transaction: committed when the block
        ends normally, rolled back when it raises. ``write`` takes SQLite's
        write lock at once (``BEGIN IMMEDIATE``).
        """  # noqa: D205
        async with self.connection() as raw:
            await self.execute(raw, self._begin(write))
            try:
                yield raw
            except BaseException:
                with contextlib.suppress(StoreUnavailableError):
                    await self.execute(raw, "ROLLBACK")
                raise
            await self.execute(raw, "COMMIT")

    async def _guarded(self, running: Awaitable[T]) -> T:
        try:
            return await running
        except Exception as error:
            if self.classify(error) is Class.CONNECTION_LOST:
                raise self._unavailable() from error
            raise

    async def execute(self, raw: Any, sql: str, params: Any = None) -> None:
        """Run plain SQL on ``raw`` (driver placeholders), discarding any rows."""
        await self._guarded(self._execute(raw, sql, params, False))

    async def query(self, raw: Any, name: str, params: list[Any]) -> Rows | int:
        """:meth:`run`, with a lost connection raised as
        :class:`~mintid.store.StoreUnavailableError`.
        """  # noqa: D205
        return await self._guarded(self.run(raw, name, params))

    async def migrate(self) -> list[int]:
        """:meth:`Database.migrate <mintid.store.Database.migrate>`, awaited."""
        return await run_async(migrating(QueryRunner(self), AsyncSystemStoreClock(), self.manifest))

    async def close(self) -> None:
        """Close the idle connections."""
        idle, self._idle = self._idle, []
        for raw in idle:
            await self._close_quietly(raw)

    async def __aenter__(self) -> AsyncDatabase:
        """Use as an async context manager: closes the pool at the end."""
        return self

    async def __aexit__(self, *_exc: object) -> None:
        """Close the idle connections."""
        await self.close()


class AsyncPostgresDatabase(AsyncDatabase):
    """PostgreSQL through psycopg 3's ``AsyncConnection`` (``mintid[postgres]``).

    Given a URL, it keeps connections of its own; given the app's
    ``psycopg_pool.AsyncConnectionPool``, it borrows them from that pool
    (switched to autocommit: the store's statements stand alone) and gives
    them back after each call.
    """

    def __init__(self, conninfo: str | Any, **connect_kwargs: Any) -> None:
        """A database at ``conninfo`` (a URL or ``key=value`` string), or over a pool."""
        super().__init__("postgres", ffi.Placeholder.FORMAT, postgres_class)
        self._conninfo = conninfo if isinstance(conninfo, str) else ""
        self._pool = None if isinstance(conninfo, str) else conninfo
        self._connect_kwargs = connect_kwargs

    async def _connect(self) -> Any:
        if self._pool is not None:
            raw = await self._pool.getconn()
            if not raw.autocommit:
                await raw.set_autocommit(True)
            return raw
        import psycopg  # an optional dependency

        return await psycopg.AsyncConnection.connect(
            self._conninfo, autocommit=True, **self._connect_kwargs
        )

    async def _give_back(self, raw: Any) -> bool:
        if self._pool is None:
            return False
        await self._pool.putconn(raw)
        return True

    async def _close(self, raw: Any) -> None:
        if self._pool is not None:
            await raw.close()
            await self._pool.putconn(raw)  # the pool replaces a closed connection
            return
        await raw.close()


def asyncpg_class(error: BaseException) -> ffi.DbErrorClass:
    """The class of an asyncpg error (by its SQLSTATE, as psycopg's)."""
    import asyncpg  # an optional dependency

    if isinstance(error, asyncpg.PostgresError):
        return postgres_state_class(str(error.sqlstate))
    if isinstance(error, asyncpg.InterfaceError | OSError):
        return Class.CONNECTION_LOST  # the connection is closed, or the server out of reach
    if isinstance(error, asyncpg.exceptions.InternalClientError) and not isinstance(
        error, asyncpg.exceptions.OutdatedSchemaCacheError
    ):
        # The protocol's state is broken: a session the server ended while idle
        # answers the next query "another operation is in progress".
        return Class.CONNECTION_LOST
    return Class.OTHER


class AsyncpgDatabase(AsyncDatabase):
    """PostgreSQL through asyncpg (``pip install mintid[asyncpg]``), one of its
    connections per store connection (no asyncpg pool: its reset query on every
    release would cost a round trip).
    """  # noqa: D205

    def __init__(self, dsn: str, **connect_kwargs: Any) -> None:
        """A database at ``dsn`` (a ``postgresql://`` URL)."""
        super().__init__("postgres", ffi.Placeholder.NUMBERED, asyncpg_class)
        self._dsn = dsn
        self._connect_kwargs = connect_kwargs

    async def _connect(self) -> Any:
        import asyncpg

        return await asyncpg.connect(self._dsn, **self._connect_kwargs)

    async def _close(self, raw: Any) -> None:
        await raw.close()

    async def _execute(self, raw: Any, sql: str, params: Any, rows: bool) -> Rows | int:
        if rows:
            return [tuple(row) for row in await raw.fetch(sql, *params)]
        # The command tag ends with the affected-row count (``UPDATE 1``), if it has one.
        tag = await raw.execute(sql, *(params or ()))
        count = str(tag).rpartition(" ")[2]
        return int(count) if count.isdigit() else 0


class AsyncMySqlDatabase(AsyncDatabase):
    """MySQL 8 or MariaDB 10.6+ through asyncmy (``pip install mintid[asyncmy]``).

    asyncmy rather than aiomysql: aiomysql 0.3.2 cannot send ``bytes``
    parameters with PyMySQL 1.2 (it calls a helper PyMySQL removed), and
    every record statement sends the key's digest as bytes.
    """

    def __init__(self, url: str | None = None, **connect_kwargs: Any) -> None:
        """A database at ``url`` (``mysql://user:password@host:port/database``) or
        asyncmy's own keyword arguments.
        """  # noqa: D205
        import asyncmy.errors  # an optional dependency

        super().__init__("mysql", ffi.Placeholder.FORMAT, mysql_classifier(asyncmy.errors))
        self._connect_kwargs = mysql_connect_kwargs(url, connect_kwargs)

    async def _connect(self) -> Any:
        import asyncmy

        return await asyncmy.connect(autocommit=True, **self._connect_kwargs)

    async def _close(self, raw: Any) -> None:
        await raw.ensure_closed()


class AsyncSqliteDatabase(AsyncDatabase):
    """An SQLite file (WAL mode) through aiosqlite (``pip install mintid[aiosqlite]``):
    see the module's notes.
    """  # noqa: D205

    def __init__(self, path: str, *, timeout: float = 30.0) -> None:
        """A database in the file ``path`` (created when missing)."""
        self._sync = SqliteDatabase(path, timeout=timeout)
        super().__init__("sqlite", ffi.Placeholder.QUESTION, _aiosqlite_class(self._sync.classify))

    async def _connect(self) -> Any:
        import aiosqlite  # an optional dependency

        # The sync executor's own connect (its options and WAL mode), on the connection's thread.
        return await aiosqlite.Connection(self._sync._connect, iter_chunk_size=64)

    async def _close(self, raw: Any) -> None:
        await raw.close()

    def _begin(self, write: bool) -> str:
        return self._sync._begin(write)

    async def _execute(self, raw: Any, sql: str, params: Any, rows: bool) -> Rows | int:
        async with raw.execute(sql, params) as cursor:
            if rows:
                return list(await cursor.fetchall())
            return max(int(cursor.rowcount), 0)


def _aiosqlite_class(
    sqlite_class: Callable[[BaseException], ffi.DbErrorClass],
) -> Callable[[BaseException], ffi.DbErrorClass]:
    """sqlite3's classes, and aiosqlite's closed connection (a ``ValueError``,
    ``no active connection``) lost, as sqlite3's own closed connection is.
    """  # noqa: D205

    def classify(error: BaseException) -> ffi.DbErrorClass:
        if type(error) is ValueError and str(error) == "no active connection":
            return Class.CONNECTION_LOST
        return sqlite_class(error)

    return classify


async def driver_connection(connection: Any) -> Any:
    """The driver's connection under the caller's ``connection``: a SQLAlchemy
    ``AsyncConnection`` (``postgresql+psycopg`` or ``+asyncpg``, ``mysql+asyncmy``,
    ``sqlite+aiosqlite``; for an ``AsyncSession``, its ``await
    session.connection()``) gives the one it wraps, so the store's statements
    run in the app's transaction and commit or roll back with its writes; any
    other connection is the driver's own.
    """  # noqa: D205
    raw = getattr(connection, "get_raw_connection", None)
    if raw is None:
        return connection
    driver = (await raw()).driver_connection
    begun = getattr(driver, "is_in_transaction", None)  # asyncpg's
    if begun is not None and not begun() and connection.in_transaction():
        # SQLAlchemy's asyncpg adapter sends BEGIN with its own first statement (the
        # other drivers begin with any statement): an empty one begins it now, or the
        # store's statements would commit on their own.
        await connection.exec_driver_sql(";")
    return driver
