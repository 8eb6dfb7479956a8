"""Databases: a driver's connections (pooled), named queries and migrations.

A :class:`Database` hands out the driver's own connections in autocommit
mode; transactions are explicit (:meth:`Database.transaction`). Errors that
mean the database is out of reach (no connection can be made, the connection
broke, the server is shutting down) become
:class:`~mintid.store.StoreUnavailableError` with the driver's exception as
``__cause__``; any other driver error (a missing table, a deadlock, a
constraint) propagates as the driver's own exception, as in the Node and JVM
adapters.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import Any, Literal, TypeVar

from mintid.store._errors import StoreUnavailableError
from mintid.store._sql import Dialect, Query, load_migrations, load_queries

__all__ = ["Database", "MySqlDatabase", "PostgresDatabase", "SqliteDatabase", "text"]

T = TypeVar("T")
Row = dict[str, Any]
Params = Mapping[str, Any]


def text(value: Any) -> Any:
    """A text column as ``str`` (MySQL's ``VARBINARY`` columns arrive as bytes); ``None`` stays."""
    return value.decode() if isinstance(value, bytes | bytearray) else value


class Database:
    """One database of one dialect: a small pool of driver connections and
    the dialect's named queries. Thread-safe; use a subclass.
    """  # noqa: D205

    dialect: Dialect
    queries: dict[str, Query]

    def __init__(
        self,
        dialect: Dialect,
        paramstyle: Literal["named", "pyformat"],
        connect: Callable[[], Any],
        is_connection_error: Callable[[BaseException], bool],
        *,
        max_idle: int = 16,
    ) -> None:
        """Set up the pool; nothing connects until first used."""
        self.dialect = dialect
        self.queries = load_queries(dialect, paramstyle)
        self._connect = connect
        self._is_connection_error = is_connection_error
        self._max_idle = max_idle
        self._idle: list[Any] = []
        self._lock = threading.Lock()

    def _unavailable(self, error: BaseException) -> StoreUnavailableError:
        return StoreUnavailableError(f"the {self.dialect} database is unavailable: {error}")

    def _open(self) -> Any:
        try:
            return self._connect()
        except Exception as error:
            # No connection at all: whatever the driver says, the database is out of reach.
            raise self._unavailable(error) from error

    def _guard(self, action: Callable[[], T]) -> T:
        try:
            return action()
        except Exception as error:
            if self._is_connection_error(error):
                raise self._unavailable(error) from error
            raise

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A driver connection in autocommit mode, back to the pool afterwards."""
        with self._lock:
            raw = self._idle.pop() if self._idle else None
        if raw is None:
            raw = self._open()
        healthy = False
        try:
            yield raw
            healthy = True
        finally:
            with self._lock:
                keep = healthy and len(self._idle) < self._max_idle
                if keep:
                    self._idle.append(raw)
            if not keep:
                _close_quietly(raw)

    def _begin(self, write: bool) -> str:
        return "BEGIN"

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
                _rollback_quietly(self, raw)
                raise
            self.execute(raw, "COMMIT")

    def execute(self, raw: Any, sql: str, params: Params | Sequence[Any] | None = None) -> None:
        """Run plain SQL on ``raw`` (driver placeholders), discarding any rows."""

        def run() -> None:
            cursor = raw.cursor()
            try:
                cursor.execute(sql) if params is None else cursor.execute(sql, params)
            finally:
                cursor.close()

        self._guard(run)

    def _run(self, raw: Any, name: str, params: Params) -> tuple[list[Row], int]:
        query = self.queries[name]

        def run() -> tuple[list[Row], int]:
            cursor = raw.cursor()
            try:
                cursor.execute(query.sql, params)
                rows: list[Row] = []
                if cursor.description is not None:
                    names = [column[0] for column in cursor.description]
                    rows = [dict(zip(names, row, strict=False)) for row in cursor.fetchall()]
                return rows, cursor.rowcount
            finally:
                cursor.close()

        return self._guard(run)

    def kind(self, name: str) -> str:
        """The result kind of the named query ``name`` in this dialect."""
        return self.queries[name].kind

    def one(self, raw: Any, name: str, params: Params) -> Row | None:
        """Run a ``:one`` query: its row or ``None``."""
        rows, _count = self._run(raw, name, params)
        return rows[0] if rows else None

    def many(self, raw: Any, name: str, params: Params) -> list[Row]:
        """Run a ``:many`` query: its rows."""
        return self._run(raw, name, params)[0]

    def execrows(self, raw: Any, name: str, params: Params) -> int:
        """Run an ``:execrows`` query: the affected-row count."""
        return self._run(raw, name, params)[1]

    def migrate(self) -> None:
        """Apply every migration, each file in one transaction (idempotent)."""
        for _name, statements in load_migrations(self.dialect):
            with self.transaction(write=True) as raw:
                for statement in statements:
                    self.execute(raw, statement)

    def close(self) -> None:
        """Close the idle connections."""
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


def _close_quietly(raw: Any) -> None:
    # A broken connection may fail to close; it is gone anyway.
    with contextlib.suppress(Exception):
        raw.close()


def _rollback_quietly(database: Database, raw: Any) -> None:
    with suppress(StoreUnavailableError):
        database.execute(raw, "ROLLBACK")


_PG_SHUTDOWN_STATES = frozenset({"57P01", "57P02", "57P03"})
_SQLITE_UNREACHABLE = ("SQLITE_CANTOPEN", "SQLITE_IOERR")


def _sqlite_connection_error(error: BaseException) -> bool:
    # The file cannot be opened or read (sqlite3 names the result code from Python 3.11).
    if isinstance(error, sqlite3.ProgrammingError) and "closed" in str(error):
        return True
    name = getattr(error, "sqlite_errorname", "")
    return isinstance(name, str) and name.startswith(_SQLITE_UNREACHABLE)


class SqliteDatabase(Database):
    """An SQLite file through the standard library's ``sqlite3`` (3.37+), in WAL mode."""

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

        super().__init__("sqlite", "named", connect, _sqlite_connection_error)

    def _begin(self, write: bool) -> str:
        return "BEGIN IMMEDIATE" if write else "BEGIN"


class PostgresDatabase(Database):
    """A PostgreSQL database through psycopg 3 (``pip install mintid[postgres]``)."""

    def __init__(self, conninfo: str, **connect_kwargs: Any) -> None:
        """A database at ``conninfo`` (a URL or ``key=value`` string)."""
        import psycopg  # an optional dependency

        def connect() -> psycopg.Connection[Any]:
            return psycopg.connect(conninfo, autocommit=True, **connect_kwargs)

        def connection_error(error: BaseException) -> bool:
            if isinstance(error, psycopg.InterfaceError):
                return True  # the connection is closed or broken
            if not isinstance(error, psycopg.OperationalError):
                return False
            # No SQLSTATE: the client lost the server. 08: connection exception.
            # 57P01-57P03: the server is shutting down or not accepting connections.
            state = error.sqlstate
            return state is None or state.startswith("08") or state in _PG_SHUTDOWN_STATES

        super().__init__("postgres", "pyformat", connect, connection_error)


class MySqlDatabase(Database):
    """A MySQL 8 or MariaDB 10.6+ database through PyMySQL (``pip install mintid[mysql]``).

    Connections never set ``CLIENT_FOUND_ROWS`` (``claim`` reads the
    affected-row count) and keep the server's strict SQL mode.
    """

    def __init__(self, url: str | None = None, **connect_kwargs: Any) -> None:
        """A database at ``url`` (``mysql://user:password@host:port/database``) or
        PyMySQL's own keyword arguments.
        """  # noqa: D205
        import pymysql  # an optional dependency
        from pymysql.constants import CLIENT

        if int(connect_kwargs.get("client_flag", 0)) & CLIENT.FOUND_ROWS:
            raise ValueError("CLIENT_FOUND_ROWS would make every duplicate claim look new")
        if url is not None:
            parts = urllib.parse.urlsplit(url)
            connect_kwargs = {
                "host": parts.hostname,
                "port": parts.port or 3306,
                "user": urllib.parse.unquote(parts.username or ""),
                "password": urllib.parse.unquote(parts.password or ""),
                "database": parts.path.lstrip("/") or None,
                **connect_kwargs,
            }

        def connect() -> Any:
            return pymysql.connect(autocommit=True, **connect_kwargs)

        def connection_error(error: BaseException) -> bool:
            if isinstance(error, pymysql.err.InterfaceError):
                return True  # the connection is closed
            if not isinstance(error, pymysql.err.OperationalError) or not error.args:
                return False
            code = error.args[0]
            # 2000-2999: client errors (cannot connect, server gone away, lost
            # connection); 1040: too many connections; 1053: server shutdown.
            return isinstance(code, int) and (2000 <= code < 3000 or code in (1040, 1053))

        super().__init__("mysql", "pyformat", connect, connection_error)
