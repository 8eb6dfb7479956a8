"""The stores for asyncio: :class:`AsyncIdempotencyStore`, and the worker-id
leases, segment IDs and outbox (:class:`AsyncWorkerLeases`,
:class:`AsyncLeasedSnowflake`, :class:`AsyncSegmentIds`, :class:`AsyncOutbox`),
with executors for psycopg 3 (``AsyncConnection``, or the app's
``psycopg_pool.AsyncConnectionPool``), asyncpg (``mintid[asyncpg]``), asyncmy
(``mintid[asyncmy]``) and SQLite (aiosqlite, ``mintid[aiosqlite]``).

The same three ways in as :class:`~mintid.store.IdempotencyStore`, with the
same names, arguments, defaults, results and errors, spelled ``async``. The
protocol is the core's record driver, stepped by the one async loop
(:func:`mintid._lane.drive_async`); what is not I/O (argument checks, result
mapping, outcome packing) is the sync store's own code.

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

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Generator
from contextlib import asynccontextmanager
from typing import Any, Final, Protocol, TypeVar

from mintid._key import IdempotencyKey
from mintid._lane import Lane, LaneDriver, drive_async
from mintid._native import ffi, native_error
from mintid._record import Problem, RecordPolicy
from mintid.store._database import (
    _DIALECTS,
    _ROWS,
    Class,
    Dialect,
    Failure,
    SqliteDatabase,
    _store_answer,
    failed,
    mysql_classifier,
    mysql_connect_kwargs,
    postgres_class,
    postgres_state_class,
    step_kind,
)
from mintid.store._errors import RecordLostError, StoreUnavailableError
from mintid.store._idempotency import (
    _HELD,
    LeaseBase,
    OperationError,
    RunResult,
    StoredRecord,
    StoredResponse,
    StoreRequest,
    _finish,
    cleaning,
    completing,
    loading,
    native_key,
    not_run,
    request_driver,
)
from mintid.store._metrics import StoreMetrics, claiming, operating, recording
from mintid.store.fast_path import AsyncRedisFastPath, bound

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

T = TypeVar("T")
Rows = list[tuple[Any, ...]]
_NativeError = (ffi.MintidError, ffi.InternalError)
#: The lease of the ``run_once`` operation running in this task.
_CURRENT: Final[contextvars.ContextVar[AsyncRecordLease | None]] = contextvars.ContextVar(
    "mintid_async_record_lease", default=None
)


class LoopBindingError(RuntimeError):
    """An async store or database used from an event loop, or a process, other
    than the one it first ran in (its connections belong to that loop and
    process): make one per event loop, and a new one in a forked child.
    """  # noqa: D205


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


class AsyncDatabase:
    """One database of one dialect for asyncio: a small pool of the driver's
    connections (autocommit), the core's statements, and their executor.
    Bound to the event loop and process of its first use; use a subclass.
    """  # noqa: D205

    dialect: Dialect

    def __init__(
        self,
        dialect: Dialect,
        placeholder: ffi.Placeholder,
        classify: Callable[[BaseException], ffi.DbErrorClass],
        *,
        max_idle: int = 16,
    ) -> None:
        """Set up the pool; nothing connects until first used."""
        self.dialect = dialect
        self.manifest = ffi.Manifest(dialect=_DIALECTS[dialect], placeholder=placeholder)
        self.statements = {s.name: s for s in ffi.store_statements(self.manifest)}
        #: The class of a driver error, as the core's drivers read it.
        self.classify = classify
        self._max_idle = max_idle
        self._idle: list[Any] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = os.getpid()

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
        """Run ``sql``: its rows when ``rows``, else its affected-row count."""
        raise NotImplementedError

    def _begin(self, write: bool) -> str:
        return "BEGIN"

    # The pool.

    async def _checkout(self) -> Any:
        self.bound()
        if self._idle:
            return self._idle.pop()
        return await self._connect()

    async def _checkin(self, raw: Any) -> None:
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

    def _unavailable(self) -> StoreUnavailableError:
        return StoreUnavailableError(
            f"the {self.dialect} database is unavailable",
            problem_name=Problem.STORAGE_UNAVAILABLE.problem_name,
        )

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

    async def run(self, raw: Any, name: str, params: list[Any]) -> Rows | int:
        """Run the core's statement ``name`` on ``raw`` with ``params``: its rows
        or its affected-row count. A driver error propagates.
        """  # noqa: D205
        statement = self.statements[name]
        return await self._execute(raw, statement.sql, params, statement.kind in _ROWS)

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

    async def migrate(self) -> None:
        """Apply every migration of the core's manifest, each in one transaction (idempotent)."""
        for migration in ffi.store_migrations(self.manifest.dialect):
            async with self.transaction(write=True) as raw:
                for statement in migration.statements:
                    await self.execute(raw, statement)

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

    async def _execute(self, raw: Any, sql: str, params: Any, rows: bool) -> Rows | int:
        async with raw.cursor() as cursor:
            await cursor.execute(sql, params)
            if rows:
                return list(await cursor.fetchall())
            return max(int(cursor.rowcount), 0)


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

    async def _execute(self, raw: Any, sql: str, params: Any, rows: bool) -> Rows | int:
        async with raw.cursor() as cursor:
            await cursor.execute(sql, params)
            if rows:
                return list(await cursor.fetchall())
            return max(int(cursor.rowcount), 0)


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


class AsyncQueryRunner:
    """Runs a driver's queries and keeps what went wrong: on a connection of
    the pool (taken at the first query, given back by :meth:`release`, closed
    when it broke or the task was cancelled mid-query) or on the caller's own.
    """  # noqa: D205

    __slots__ = ("_database", "_metrics", "_pooled", "_raw", "cause", "in_transaction")

    def __init__(
        self, database: AsyncDatabase, raw: Any = None, metrics: StoreMetrics | None = None
    ) -> None:
        """A runner over ``database``'s pool, or over the caller's ``raw``
        connection; each failed query's class goes to ``metrics``.
        """  # noqa: D205
        self._database = database
        self._metrics = metrics
        self._raw = raw
        self._pooled = raw is None
        #: The driver's exception behind the last failed answer.
        self.cause: BaseException | None = None
        #: Whether a transaction a driver began is open.
        self.in_transaction = False

    async def answer(self, query: ffi.StoreQuery) -> ffi.StoreAnswer:
        """The database's answer to ``query`` (a failure classified, never raised)."""
        params = [getattr(p, "value", None) for p in query.params]
        return _store_answer(await self.result(query.name, params))

    async def result(self, name: str, params: list[Any]) -> Rows | int | Failure:
        """The answer to the statement ``name``: rows, a count or the failure."""
        database = self._database
        return await self._answer(lambda raw: database.run(raw, name, params))

    async def begin(self, write: bool) -> ffi.StoreAnswer:
        """Begin a transaction (``write``: SQLite's ``BEGIN IMMEDIATE``)."""
        answer = await self._answer(self._control(self._database._begin(write)))
        self.in_transaction = isinstance(answer, int)
        return _store_answer(answer)

    async def commit(self) -> ffi.StoreAnswer:
        """Commit; a failed commit stays in the transaction, for the driver's rollback."""
        answer = await self._answer(self._control("COMMIT"))
        self.in_transaction = not isinstance(answer, int)
        return _store_answer(answer)

    async def rollback(self) -> ffi.StoreAnswer:
        """Roll back, whatever happened: ``Affected(0)`` (the cause of the
        failure that led here is kept).
        """  # noqa: D205
        cause = self.cause
        await self._answer(self._control("ROLLBACK"))
        self.in_transaction, self.cause = False, cause
        return _store_answer(0)

    def _control(self, sql: str) -> Callable[[Any], Awaitable[Rows | int]]:
        database = self._database

        async def run(raw: Any) -> int:
            await database._execute(raw, sql, None, False)
            return 0

        return run

    async def _answer(self, run: Callable[[Any], Awaitable[Rows | int]]) -> Rows | int | Failure:
        database = self._database
        raw = self._raw
        if raw is None:
            try:
                raw = self._raw = await database._checkout()
            except LoopBindingError:
                raise
            except Exception as error:
                return failed(self, Class.CONNECTION_LOST, error)
        try:
            answer = await run(raw)
        except Exception as error:
            kind = database.classify(error)
            failure = failed(self, kind, error)
            if kind is Class.CONNECTION_LOST and self._pooled:
                # The server may have restarted: the idle connections are likely gone too.
                self._raw = None
                self.in_transaction = False
                await database._close_quietly(raw)
                await database.close()
            return failure
        except BaseException:
            # Cancelled mid-query: the connection's state is unknown.
            if self._pooled:
                self._raw = None
                self.in_transaction = False
                await database._close_quietly(raw)
            raise
        self.cause = None
        return answer

    async def release(self) -> None:
        """Give the pool's connection back (the caller's stays with the caller);
        a transaction still open is rolled back first.
        """  # noqa: D205
        if self.in_transaction:
            await self.rollback()
        raw = self._raw
        if raw is not None and self._pooled:
            self._raw = None
            await self._database._checkin(raw)


async def drive_steps(
    runner: AsyncQueryRunner,
    clock: AsyncStoreClock,
    first: Callable[[], Any],
    push: Callable[[ffi.StoreAnswer], Any],
    resume: Callable[[], Any],
) -> Any:
    """:func:`mintid.store._database.drive` for asyncio: a core driver's
    ``steps`` (not on the lane: leases, segment fetches) run on ``runner``,
    each answer and pause awaited, until its end. Every loop, retry and error
    code is the driver's.
    """  # noqa: D205
    try:
        step = first()
        while True:
            kind = step_kind(step)
            if kind == "RUN":
                step = push(await runner.answer(step.query))
            elif kind == "BEGIN":
                step = push(await runner.begin(step.write))
            elif kind == "COMMIT":
                step = push(await runner.commit())
            elif kind == "ROLLBACK":
                step = push(await runner.rollback())
            elif kind == "PAUSE":
                if not runner.in_transaction:
                    await runner.release()
                await clock.pause_millis(step.millis)
                step = resume()
            else:
                return step
    except _NativeError as error:
        raise native_error(error) from runner.cause
    finally:
        await runner.release()


async def pump_async(
    runner: AsyncQueryRunner, steps: Generator[ffi.StoreQuery, ffi.StoreAnswer, T]
) -> T:
    """:func:`mintid.store._idempotency.pump` with the answers awaited."""
    try:
        query = next(steps)
        while True:
            query = steps.send(await runner.answer(query))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    except _NativeError as error:
        raise native_error(error) from runner.cause
    finally:
        await runner.release()


class AsyncRecordLease(LeaseBase):
    """:class:`~mintid.store.RecordLease` for asyncio: a claim on a key, with
    its lease, from :meth:`AsyncIdempotencyStore.claim_lease` (or, as
    :meth:`current`, the lease a ``run_once`` operation runs under).
    """  # noqa: D205

    def __init__(
        self,
        store: AsyncIdempotencyStore,
        driver: LaneDriver,
        key: ffi.IdempotencyKey,
        held: ffi.Held,
        *,
        finishable: bool = True,
    ) -> None:
        """Made by the store, never by hand."""
        super().__init__(driver, key, held, store._metrics, finishable=finishable)
        self._store = store
        self._lock = asyncio.Lock()

    @staticmethod
    def current() -> AsyncRecordLease | None:
        """The lease of the ``run_once`` operation running in this task, if any."""
        return _CURRENT.get()

    async def renew(self) -> int:
        """Move the lease deadline on; the new deadline (see :meth:`RecordLease.renew`)."""
        store = self._store
        store.database.bound()
        async with self._lock:
            steps = self._renewing(store.database.manifest, store.policy, store._clock.now_millis())
            return await pump_async(store._runner(), steps)

    async def complete(self, response: StoredResponse) -> None:
        """Store the response (see :meth:`RecordLease.complete`)."""
        await self._finish(response)

    async def fail(
        self, error: str, *, retryable: bool = False, response: StoredResponse | None = None
    ) -> None:
        """Store a failure (see :meth:`RecordLease.fail`)."""
        await self._finish(OperationError(error, retryable=retryable, response=response))

    async def _finish(self, result: object) -> None:
        store = self._store
        store.database.bound()
        step = self._finish_step(result, store._clock.now_millis())
        await _to_the_end(self._recording(result, step))

    async def _recording(self, result: object, step: bytes) -> None:
        store = self._store
        with completing(store._metrics, ffi.Way.LEASE, result) as ended:
            ended(await drive_async(store._runner(), store._clock, self._driver, step))

    async def _renew_every(self, every_millis: int) -> None:
        """The background renewal: every ``every_millis`` until cancelled or lost."""
        while True:
            # The schedule is real time, as the sync store's heartbeat (never a test's clock).
            await asyncio.sleep(every_millis / 1000)
            try:
                await self.renew()
            except RecordLostError:
                return  # the lease says so (lost); nothing more to renew
            except Exception:  # unavailable (or another failure): the next beat tries again
                continue


class AsyncIdempotencyStore:
    """:class:`~mintid.store.IdempotencyStore` for asyncio: idempotency records
    in one :class:`AsyncDatabase` under one :class:`~mintid.RecordPolicy`.

    Bound to one event loop and one process (:class:`LoopBindingError`).

    Cancellation: once the operation has an outcome, recording it finishes
    even if the caller goes away (docs/spec.md, "Completion keeps trying"). A
    ``run_once`` whose task is cancelled while the operation runs releases
    the key (as for any exception the operation raises: a retryable failure,
    error ``CancelledError``, that the next request runs anew); one cancelled
    after the operation returned stores its response; a completion or
    release cancelled midway (:meth:`AsyncRecordLease.complete` and ``fail``
    too) runs to its end. Then the :class:`asyncio.CancelledError`
    propagates. One cancelled during the claim leaves a claim written (if
    it was) pending until its lease passes, when another request takes the
    key over; nothing ran.
    """  # noqa: D205

    def __init__(
        self,
        database: AsyncDatabase,
        policy: RecordPolicy,
        *,
        clock: AsyncStoreClock | None = None,
        fast_path: AsyncRedisFastPath | None = None,
        metrics: StoreMetrics | None = None,
    ) -> None:
        """A store over ``database`` (see :class:`AsyncPostgresDatabase`, …), with
        the Redis fast path in front of ``run_once`` and ``claim_lease`` when
        ``fast_path`` is given (:mod:`mintid.store.fast_path`); ``metrics`` as
        the sync store's (by default OpenTelemetry's global providers, when
        ``opentelemetry-api`` is importable).
        """  # noqa: D205
        if not isinstance(policy, RecordPolicy):
            raise TypeError(f"policy must be a RecordPolicy, got {type(policy).__name__}")
        self.database = async_database(database)
        self.policy = policy
        #: Where decisions, latencies, errors and spans are reported.
        self.metrics, self._metrics = recording(metrics)
        self._clock = async_clock(clock)
        self._lane = Lane(
            ffi.RecordDrivers(database.manifest, policy._checked),
            bound(fast_path, AsyncRedisFastPath, self._metrics),
        )

    def _runner(self, raw: Any = None) -> AsyncQueryRunner:
        """A runner on the pool (or on the caller's ``raw``), reporting to the metrics."""
        return AsyncQueryRunner(self.database, raw, self._metrics)

    async def _start(
        self, runner: AsyncQueryRunner, way: ffi.Way, key: IdempotencyKey, request: StoreRequest
    ) -> tuple[LaneDriver, Any]:
        self.database.bound()
        driver, step = request_driver(self._lane, self._clock, way, key, request)
        with claiming(self._metrics, way) as ended:
            return driver, ended(await drive_async(runner, self._clock, driver, step))

    async def _end(
        self,
        runner: AsyncQueryRunner,
        way: ffi.Way,
        driver: LaneDriver,
        result: object,
        beat: asyncio.Task[None] | None = None,
    ) -> Any:
        """Store what the operation came to, once the renewal ``beat`` has stopped."""
        await _stopped(beat)
        clock = self._clock
        step = _finish(driver, result, clock.now_millis())
        with completing(self._metrics, way, result) as ended:
            return ended(await drive_async(runner, clock, driver, step))

    async def run_once(
        self,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[], Awaitable[StoredResponse]],
    ) -> RunResult:
        """:meth:`IdempotencyStore.run_once <mintid.store.IdempotencyStore.run_once>`
        with an async ``operation``; its lease is renewed by a task of this
        loop while it runs (:meth:`AsyncRecordLease.current`).
        """  # noqa: D205
        runner = self._runner()
        way = ffi.Way.RUN_ONCE
        driver, held = await self._start(runner, way, key, request)
        if type(held) is not _HELD:
            return not_run(held)
        lease = AsyncRecordLease(self, driver, native_key(key), held, finishable=False)
        every = held.renew_every_millis
        current = _CURRENT.set(lease)
        beat = (
            None
            if every is None
            else asyncio.get_running_loop().create_task(lease._renew_every(every))
        )
        try:
            with operating(self._metrics, way):
                response = await operation()
        except BaseException as error:
            _CURRENT.reset(current)
            await _to_the_end(self._end(runner, way, driver, error, beat))
            raise
        _CURRENT.reset(current)
        await _to_the_end(self._end(runner, way, driver, response, beat))
        return RunResult("execute", response)

    async def in_transaction(
        self,
        connection: Any,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[Any], Awaitable[StoredResponse]],
    ) -> RunResult:
        """:meth:`run_once` inside the caller's transaction on ``connection`` (the
        driver's async connection, e.g. from :meth:`AsyncDatabase.transaction`,
        or a SQLAlchemy ``AsyncConnection`` on the same driver: see
        :func:`driver_connection`), as :meth:`IdempotencyStore.in_transaction
        <mintid.store.IdempotencyStore.in_transaction>`; ``operation`` gets
        ``connection`` as given.
        """  # noqa: D205
        runner = self._runner(await driver_connection(connection))
        way = ffi.Way.SAME_TRANSACTION
        driver, held = await self._start(runner, way, key, request)
        if type(held) is not _HELD:
            return not_run(held)
        try:
            with operating(self._metrics, way):
                response = await operation(connection)
        except BaseException as error:
            await _to_the_end(self._end(runner, way, driver, error))
            raise
        await _to_the_end(self._end(runner, way, driver, response))
        return RunResult("execute", response)

    async def claim_lease(
        self, key: IdempotencyKey, request: StoreRequest
    ) -> AsyncRecordLease | RunResult:
        """Claim ``key`` with a lease: an :class:`AsyncRecordLease` to complete or
        fail, or the :class:`~mintid.store.RunResult` of a request that does not run.
        """  # noqa: D205
        driver, held = await self._start(self._runner(), ffi.Way.LEASE, key, request)
        if type(held) is not _HELD:
            return not_run(held)
        return AsyncRecordLease(self, driver, native_key(key), held)

    async def load(self, key: IdempotencyKey) -> StoredRecord | None:
        """The stored record of ``key``, or ``None``."""
        self.database.bound()
        steps = loading(self.database.manifest, key)
        return await pump_async(self._runner(), steps)

    async def cleanup(self, batch_size: int = 1000) -> int:
        """Delete expired records, ``batch_size`` per statement; the total
        (see :meth:`IdempotencyStore.cleanup <mintid.store.IdempotencyStore.cleanup>`).
        """  # noqa: D205
        self.database.bound()
        steps = cleaning(self.database.manifest, batch_size, self._clock)
        return await pump_async(self._runner(), steps)


async def _to_the_end(work: Coroutine[Any, Any, T]) -> T:
    """``work`` (a completion, a release) run to its end even if this task is
    cancelled meanwhile, the cancellation raised after it: once an operation
    has an outcome, recording it finishes even if the caller goes away
    (docs/spec.md, "Completion keeps trying"). A failure of ``work`` met by a
    cancellation is the cancellation's cause.
    """  # noqa: D205
    running = asyncio.ensure_future(work)
    cancelled: asyncio.CancelledError | None = None
    while not running.done():
        try:
            await asyncio.wait([running])  # a cancelled wait leaves ``running`` alone
        except asyncio.CancelledError as error:
            cancelled = error
    if cancelled is None:
        return running.result()
    if not running.cancelled():
        cancelled.__cause__ = running.exception()
    raise cancelled


async def _stopped(beat: asyncio.Task[None] | None) -> None:
    """Stop the background renewal and wait until it has (a renewal in flight ends)."""
    if beat is None:
        return
    beat.cancel()
    await asyncio.wait([beat])


# The async twins of the other stores, on the pieces above (imported last: they use them).
from mintid.store._aio_ids import (  # noqa: E402
    AsyncLeasedSnowflake,
    AsyncSegmentIds,
    AsyncWorkerLeases,
)
from mintid.store._aio_outbox import AsyncOutbox  # noqa: E402
