"""Databases: a pool of a driver's connections (autocommit; transactions explicit), and
the executor of the core's store drivers: a named statement of the core's manifest run
with positional values, answered with its rows or affected-row count, a driver error
classified. Connections belong to one process: a pool in a forked child forgets (never
closes) what it inherited.
"""  # noqa: D205

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import urllib.parse
import weakref
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any, Final, Literal, TypeVar

from mintid._native import ffi
from mintid._record import Problem
from mintid._wire import migrating, run
from mintid.store._clock import SystemStoreClock
from mintid.store._errors import LoopBindingError, StoreUnavailableError
from mintid.store._metrics import StoreMetrics, class_name

__all__ = [
    "Database",
    "Dialect",
    "MySqlDatabase",
    "PostgresDatabase",
    "QueryRunner",
    "SqliteDatabase",
]

T = TypeVar("T")
#: A failed query: the executor's class and the driver's message.
Failure = tuple[Any, str]
#: What a query came to: its rows, its affected-row count, or its failure.
Result = list[tuple[Any, ...]] | int | Failure
#: A step loop's generator (it yields calls, returns ``T``).
Steps = Generator[Any, Any, T]

#: The SQL dialects of ``schema/``.
Dialect = Literal["postgres", "mysql", "sqlite"]

_DIALECTS: Final = {
    "postgres": ffi.Dialect.POSTGRES,
    "mysql": ffi.Dialect.MYSQL,
    "sqlite": ffi.Dialect.SQLITE,
}
_ROWS: Final = frozenset({ffi.ResultKind.ONE, ffi.ResultKind.MANY})

Class = ffi.DbErrorClass


def text(value: Any) -> Any:
    """A text column as ``str`` (MySQL's ``VARBINARY`` columns arrive as bytes); ``None`` stays."""
    return value.decode() if isinstance(value, bytes | bytearray) else value


class DatabaseBase:
    """One database of one dialect, sync or async: the core's statements for its
    driver and how its errors classify (what :class:`Database` and
    :class:`~mintid.store.aio.AsyncDatabase` share).
    """  # noqa: D205

    dialect: Dialect
    #: The core's statements for this driver, by name.
    statements: dict[str, ffi.Statement]

    def __init__(
        self,
        dialect: Dialect,
        placeholder: ffi.Placeholder,
        classify: Callable[[BaseException], ffi.DbErrorClass],
        max_idle: int,
    ) -> None:
        """Set up the pool; nothing connects until first used."""
        self.dialect = dialect
        self.manifest = ffi.Manifest(dialect=_DIALECTS[dialect], placeholder=placeholder)
        self.statements = {s.name: s for s in ffi.store_statements(self.manifest)}
        #: The class of a driver error, as the core's drivers read it.
        self.classify = classify
        self._max_idle = max_idle
        self._idle: list[Any] = []
        self._pid = os.getpid()

    def _execute(self, raw: Any, sql: str, params: Any, rows: bool) -> Any:
        """Run ``sql`` on ``raw``: its rows when ``rows``, else its affected-row count (or
        its awaitable); a driver error propagates.
        """  # noqa: D205
        raise NotImplementedError

    def run(self, raw: Any, name: str, params: list[Any]) -> Any:
        """Run the core's statement ``name`` on ``raw`` with ``params`` (in binding
        order): its rows (tuples in ``SELECT`` order) or its affected-row count (in
        asyncio, awaited). A driver error propagates (classify it with :attr:`classify`).
        """  # noqa: D205
        statement = self.statements[name]
        return self._execute(raw, statement.sql, params, statement.kind in _ROWS)

    def _control(self, raw: Any, sql: str) -> Any:
        """Run plain ``sql`` (no parameters, no rows) on ``raw``: a count (or its awaitable)."""
        return self._execute(raw, sql, None, False)

    def _begin(self, write: bool) -> str:
        return "BEGIN"

    def _unavailable(self) -> StoreUnavailableError:
        return StoreUnavailableError(
            f"the {self.dialect} database is unavailable",
            problem_name=Problem.STORAGE_UNAVAILABLE.problem_name,
        )


class Database(DatabaseBase):
    """One database of one dialect: a small pool of DB-API driver connections, the
    core's statements for its driver, and the executor that runs them.
    Thread-safe; use a subclass.
    """  # noqa: D205

    def __init__(
        self,
        dialect: Dialect,
        placeholder: ffi.Placeholder,
        connect: Callable[[], Any],
        classify: Callable[[BaseException], ffi.DbErrorClass],
        *,
        max_idle: int = 16,
    ) -> None:
        """Set up the pool; nothing connects until first used."""
        super().__init__(dialect, placeholder, classify, max_idle)
        self._connect = connect
        self._lock = threading.Lock()
        #: How many connections are lent out (checked out, not yet back or discarded).
        self._lent = 0
        self._returned = threading.Condition(self._lock)

    def bound(self) -> None:
        """Nothing to check: a sync database serves every thread (and a forked child)."""

    # The pool.

    def _checkout(self) -> Any:
        """A connection of this process: an idle one, or a new one (the driver's error)."""
        if self._pid != os.getpid():
            # A forked child: forget (never close) what the parent's pool held.
            self._forget_parent()
        with self._lock:
            self._lent += 1
            if self._idle:
                return self._idle.pop()
        try:
            return self._connect()
        except BaseException:
            self._back()
            raise

    def _forget_parent(self) -> None:
        """In a forked child: a pool of its own, nothing lent."""
        self._idle, self._lent, self._pid = [], 0, os.getpid()
        self._lock = threading.Lock()
        self._returned = threading.Condition(self._lock)

    def _back(self) -> None:
        """One lent connection is back or gone."""
        with self._lock:
            self._lent -= 1
            self._returned.notify_all()

    def _discard(self, raw: Any, pid: int) -> None:
        """Close a broken connection taken in process ``pid`` (a parent's is forgotten)."""
        if pid != os.getpid() or pid != self._pid:
            return
        _close_quietly(raw)
        self._back()

    def _checkin(self, raw: Any, pid: int) -> None:
        """Give back a connection taken in process ``pid`` (one from a parent is forgotten)."""
        if pid != os.getpid() or pid != self._pid:
            return
        with self._lock:
            self._lent -= 1
            self._returned.notify_all()
            if len(self._idle) < self._max_idle:
                self._idle.append(raw)
                return
        _close_quietly(raw)

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A driver connection in autocommit mode, back to the pool afterwards
        (closed instead when the block raised).
        """  # noqa: D205
        pid = os.getpid()
        try:
            raw = self._checkout()
        except Exception as error:
            # No connection at all: whatever the driver says, the database is out of reach.
            raise self._unavailable() from error
        try:
            yield raw
        except BaseException:
            self._discard(raw, pid)
            raise
        self._checkin(raw, pid)

    @contextmanager
    def transaction(self, *, write: bool = False) -> Iterator[Any]:
        """A driver connection inside a transaction: committed when the block
        ends normally, rolled back when it raises. ``write`` takes SQLite's
        write lock at once (``BEGIN IMMEDIATE``).
        """  # noqa: D205
        with self.connection() as raw:
            self.execute(raw, self._begin(write))
            try:
                yield raw
            except BaseException:
                with contextlib.suppress(StoreUnavailableError):
                    self.execute(raw, "ROLLBACK")
                raise
            self.execute(raw, "COMMIT")

    def _execute(self, raw: Any, sql: str, params: Any, rows: bool) -> Any:
        cursor = raw.cursor()
        try:
            cursor.execute(sql) if params is None else cursor.execute(sql, params)
            return list(cursor.fetchall()) if rows else max(int(cursor.rowcount), 0)
        finally:
            cursor.close()

    def _guard(self, action: Callable[[], T]) -> T:
        try:
            return action()
        except Exception as error:
            if self.classify(error) is Class.CONNECTION_LOST:
                raise self._unavailable() from error
            raise

    def execute(
        self, raw: Any, sql: str, params: Mapping[str, Any] | Sequence[Any] | None = None
    ) -> None:
        """Run plain SQL on ``raw`` (driver placeholders), discarding any rows."""
        self._guard(lambda: self._execute(raw, sql, params, False))

    def query(self, raw: Any, name: str, params: list[Any]) -> list[tuple[Any, ...]] | int:
        """:meth:`run`, with a lost connection raised as
        :class:`~mintid.store.StoreUnavailableError`.
        """  # noqa: D205
        answer: list[tuple[Any, ...]] | int = self._guard(lambda: self.run(raw, name, params))
        return answer

    def migrate(self) -> list[int]:
        """Apply the core's numbered migrations not applied yet, each in one
        transaction: the core's migration driver (its lock against other
        migrators, versions table and order) on one connection. The versions
        this call applied (none when every one was).
        """  # noqa: D205
        return run(migrating(QueryRunner(self), SystemStoreClock(), self.manifest))

    def close(self) -> None:
        """Close the idle connections (in a forked child: forget the parent's)."""
        idle: list[Any] = []
        if self._pid == os.getpid():
            with self._lock:
                idle, self._idle = self._idle, []
        for raw in idle:
            _close_quietly(raw)

    def __enter__(self) -> Database:
        """Use as a context manager: closes the pool at the end."""
        return self

    def __exit__(self, *_exc: object) -> None:
        """Close the idle connections."""
        self.close()


class QueryRunner:
    """Runs a driver's queries and keeps what went wrong, for the sync and the
    asyncio databases alike: on a connection of the pool (taken at the first
    query, given back by :meth:`release`, closed when it broke or a task was
    cancelled mid-query) or on the caller's own connection. Each method is a
    step of the one step loop (:func:`mintid._wire.run`, ``run_async``): a
    generator that yields the database's calls.
    """  # noqa: D205

    __slots__ = ("_database", "_metrics", "_pid", "_pooled", "_raw", "cause", "in_transaction")

    def __init__(self, database: Any, raw: Any = None, metrics: StoreMetrics | None = None) -> None:
        """A runner over ``database``'s pool, or over the caller's ``raw``
        connection; each failed query's class goes to ``metrics``.
        """  # noqa: D205
        self._database = database
        self._metrics = metrics
        self._raw = raw
        self._pooled = raw is None
        self._pid = 0
        #: The driver's exception behind the last failed answer.
        self.cause: BaseException | None = None
        #: Whether a transaction a driver began is open.
        self.in_transaction = False

    def result(self, name: str, params: list[Any]) -> Steps[Result]:
        """The database's answer to the statement ``name`` with ``params``:
        rows, an affected-row count, or the :data:`Failure` (never raised).
        """  # noqa: D205
        database = self._database
        return (yield from self._answer(lambda raw: database.run(raw, name, params)))

    def begin(self, write: bool) -> Steps[Result]:
        """Begin a transaction (``write``: SQLite's ``BEGIN IMMEDIATE``)."""
        answer = yield from self.execute(self._database._begin(write))
        self.in_transaction = isinstance(answer, int)
        return answer

    def commit(self) -> Steps[Result]:
        """Commit; a failed commit stays in the transaction, for the driver's rollback."""
        answer = yield from self.execute("COMMIT")
        self.in_transaction = not isinstance(answer, int)
        return answer

    def rollback(self) -> Steps[Result]:
        """Roll back, whatever happened: ``0`` (the cause of the failure that led here is kept)."""
        cause = self.cause
        yield from self.execute("ROLLBACK")
        self.in_transaction, self.cause = False, cause
        return 0

    def execute(self, sql: str) -> Steps[Result]:
        """Run plain ``sql`` (a migration's statement, BEGIN, …): ``0`` or the failure."""
        database = self._database
        return (yield from self._answer(lambda raw: database._control(raw, sql)))

    def _answer(self, run: Callable[[Any], Any]) -> Steps[Result]:
        database = self._database
        raw = self._raw
        if raw is None:
            try:
                self._pid = os.getpid()
                raw = self._raw = yield database._checkout()
            except LoopBindingError:
                raise
            except Exception as error:
                return self._failed(Class.CONNECTION_LOST, error)
        try:
            answer = yield run(raw)
        except Exception as error:
            kind = database.classify(error)
            failure = self._failed(kind, error)
            if kind is Class.CONNECTION_LOST and self._pooled:
                # The server may have restarted: the idle connections are likely gone too.
                self._raw = None
                self.in_transaction = False
                yield database._discard(raw, self._pid)
                yield database.close()
            return failure
        except GeneratorExit:
            raise  # CLOSED (mintid._wire)
        except BaseException:
            # Cancelled mid-query: the connection's state is unknown.
            if self._pooled:
                self._raw = None
                self.in_transaction = False
                yield database._discard(raw, self._pid)
            raise
        self.cause = None
        return answer  # type: ignore[no-any-return]

    def _failed(self, kind: ffi.DbErrorClass, error: Exception) -> Failure:
        """A query that failed with ``error`` of class ``kind``: kept as the cause, counted."""
        self.cause = error
        if self._metrics is not None:
            self._metrics.store_error(class_name(kind))
        return (kind, str(error))

    def release(self) -> Steps[None]:
        """Give the pool's connection back (the caller's stays with the caller);
        a transaction still open is rolled back first.
        """  # noqa: D205
        if self.in_transaction:
            yield from self.rollback()
        raw = self._raw
        if raw is not None and self._pooled:
            self._raw = None
            yield self._database._checkin(raw, self._pid)


def _close_quietly(raw: Any) -> None:
    # A broken connection may fail to close; it is gone anyway.
    with contextlib.suppress(Exception):
        raw.close()


def shutdown_wait_seconds() -> float:
    """How long a shutdown waits for work under way (the core's bound), in seconds."""
    return float(ffi.shutdown_wait_millis()) / 1000


#: The SQLite databases of this process, and those a fork under way holds.
_SQLITE: weakref.WeakSet[SqliteDatabase] = weakref.WeakSet()
_HELD: list[SqliteDatabase] = []


def _nothing_lent(database: Database) -> bool:
    return database._lent == 0


def _sqlite_before_fork() -> None:
    for database in list(_SQLITE):
        if database._pid != os.getpid():
            continue  # a parent's, never used here
        database._returned.acquire()
        _HELD.append(database)
        database._returned.wait_for(partial(_nothing_lent, database), shutdown_wait_seconds())


def _sqlite_after_fork_in_parent() -> None:
    while _HELD:
        _HELD.pop()._returned.release()


def _sqlite_after_fork_in_child() -> None:
    _HELD.clear()  # each pool finds itself in a new process and starts anew


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_sqlite_before_fork,
        after_in_parent=_sqlite_after_fork_in_parent,
        after_in_child=_sqlite_after_fork_in_child,
    )


def _sqlite_class(error: BaseException) -> ffi.DbErrorClass:
    if isinstance(error, sqlite3.ProgrammingError) and "closed" in str(error):
        return Class.CONNECTION_LOST
    code = getattr(error, "sqlite_errorcode", None)  # Python 3.11+
    if not isinstance(error, sqlite3.Error) or not isinstance(code, int):
        return Class.CONSTRAINT if isinstance(error, sqlite3.IntegrityError) else Class.OTHER
    return ffi.classify_db_error(ffi.Dialect.SQLITE, str(code), None, str(error))


class SqliteDatabase(Database):
    """An SQLite file through the standard library's ``sqlite3`` (3.37+), in WAL mode.

    SQLite keeps the locks of a process's connections in the process: a child
    forked while another thread's connection holds one (a transaction under
    way: a segment fetched in the background, a heartbeat) inherits it as held
    by a connection it does not have, and never gets the lock (``SQLITE_BUSY``
    for ever). So an ``os.fork()`` waits until every connection lent out is
    back (at most the core's shutdown wait) and lends none until it is done.
    """

    def __init__(self, path: str, *, timeout: float = 30.0) -> None:
        """A database in the file ``path`` (created when missing)."""
        if sqlite3.sqlite_version_info < (3, 37):
            raise RuntimeError(f"SQLite 3.37+ is needed, this is {sqlite3.sqlite_version}")

        def connect() -> sqlite3.Connection:
            raw = sqlite3.connect(
                path, isolation_level=None, timeout=timeout, check_same_thread=False
            )
            raw.execute("PRAGMA journal_mode = WAL")
            return raw

        super().__init__("sqlite", ffi.Placeholder.QUESTION, connect, _sqlite_class)
        _SQLITE.add(self)

    def _begin(self, write: bool) -> str:
        return "BEGIN IMMEDIATE" if write else "BEGIN"


def postgres_class(error: BaseException) -> ffi.DbErrorClass:
    """The class of a psycopg 3 error (its connections, sync or async, raise the same)."""
    import psycopg  # an optional dependency

    if not isinstance(error, psycopg.Error):
        return Class.OTHER
    state = error.sqlstate
    if state is None:
        # No SQLSTATE: the client lost the server, or the connection is closed.
        lost = isinstance(error, psycopg.OperationalError | psycopg.InterfaceError)
        return Class.CONNECTION_LOST if lost else Class.OTHER
    return postgres_state_class(state)


def postgres_state_class(state: str) -> ffi.DbErrorClass:
    """The class of a PostgreSQL error by its SQLSTATE (psycopg's, asyncpg's): the core's table."""
    return ffi.classify_db_error(ffi.Dialect.POSTGRES, None, state, None)


class PostgresDatabase(Database):
    """A PostgreSQL database through psycopg 3 (``pip install mintid[postgres]``)."""

    def __init__(self, conninfo: str, **connect_kwargs: Any) -> None:
        """A database at ``conninfo`` (a URL or ``key=value`` string)."""
        import psycopg  # an optional dependency

        def connect() -> psycopg.Connection[Any]:
            return psycopg.connect(conninfo, autocommit=True, **connect_kwargs)

        super().__init__("postgres", ffi.Placeholder.FORMAT, connect, postgres_class)


def mysql_classifier(errors: Any) -> Callable[[BaseException], ffi.DbErrorClass]:
    """The classifier of a MySQL driver with PyMySQL's error classes in the
    module ``errors`` (PyMySQL's ``pymysql.err``, asyncmy's ``asyncmy.errors``).
    """  # noqa: D205

    def classify(error: BaseException) -> ffi.DbErrorClass:
        if isinstance(error, errors.InterfaceError):
            return Class.CONNECTION_LOST  # the connection is closed
        if not isinstance(error, errors.MySQLError) or not error.args:
            return Class.OTHER
        code = error.args[0]
        if not isinstance(code, int):
            return Class.OTHER
        return ffi.classify_db_error(ffi.Dialect.MYSQL, str(code), None, None)

    return classify


def mysql_connect_kwargs(url: str | None, connect_kwargs: dict[str, Any]) -> dict[str, Any]:
    """PyMySQL's keyword arguments from ``url`` (``mysql://user:password@host:port/db``)."""
    if url is None:
        return connect_kwargs
    parts = urllib.parse.urlsplit(url)
    return {
        "host": parts.hostname,
        "port": parts.port or 3306,
        "user": urllib.parse.unquote(parts.username or ""),
        "password": urllib.parse.unquote(parts.password or ""),
        "database": parts.path.lstrip("/") or None,
        **connect_kwargs,
    }


class MySqlDatabase(Database):
    """A MySQL 8 or MariaDB 10.6+ database through PyMySQL (``pip install mintid[mysql]``).

    Correct with or without ``CLIENT_FOUND_ROWS`` in ``client_flag`` (the
    claim is a plain ``INSERT``; every other write changes its row).
    """

    def __init__(self, url: str | None = None, **connect_kwargs: Any) -> None:
        """A database at ``url`` (``mysql://user:password@host:port/database``) or
        PyMySQL's own keyword arguments.
        """  # noqa: D205
        import pymysql  # an optional dependency

        connect_kwargs = mysql_connect_kwargs(url, connect_kwargs)

        def connect() -> Any:
            return pymysql.connect(autocommit=True, **connect_kwargs)

        super().__init__("mysql", ffi.Placeholder.FORMAT, connect, mysql_classifier(pymysql.err))
