"""Shared pieces of the storage tests: databases of each dialect, a manual
clock, and the conformance files (tests/conformance/, read strictly).

PostgreSQL and MariaDB come from scripts/db/with-db.sh (MINTID_PG_URL,
MINTID_MYSQL_URL); without them the tests of those dialects are skipped,
except under CI=true, where they fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import pickle
import socket
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
import pymysql
import pytest
from pymysql.constants import CLIENT

from mintid import LeasePolicy, RelayPolicy, SegmentPolicy
from mintid._native import ffi
from mintid.store import (
    Database,
    LeasedSnowflake,
    MySqlDatabase,
    Outbox,
    PostgresDatabase,
    SegmentIds,
    SqliteDatabase,
    StoreClock,
    WorkerLeases,
)
from mintid.store.aio import (
    AsyncDatabase,
    AsyncMySqlDatabase,
    AsyncpgDatabase,
    AsyncPostgresDatabase,
    AsyncSqliteDatabase,
)

CONFORMANCE = pathlib.Path(__file__).resolve().parents[3] / "tests" / "conformance"
DIALECTS = ("sqlite", "postgres", "mysql")
DATABASE = "mintid_pystore"
#: Makes a store on a case's database (``found_rows``: MySQL's ``CLIENT_FOUND_ROWS``).
Factory = Callable[..., Database]


def cases(file: str) -> list[dict[str, Any]]:
    """The cases of one conformance file."""
    loaded: list[dict[str, Any]] = json.loads((CONFORMANCE / file).read_text())["cases"]
    return loaded


def case_id(case: dict[str, Any]) -> str:
    return str(case["name"])


def unknown(what: str, value: object) -> AssertionError:
    return AssertionError(f"the runner does not know the {what} {value!r}")


def check_fields(step: dict[str, Any], allowed: set[str]) -> None:
    """Fail on a field the runner does not know."""
    extra = set(step) - allowed - {"do", "expect"}
    if extra:
        raise unknown("fields", sorted(extra))


class ManualStoreClock:
    """A store clock set by the runner; pauses move it forward (advancing on pause)."""

    def __init__(self, now_millis: int = 0) -> None:
        self._now = now_millis
        self._lock = threading.Lock()

    def set(self, now_millis: int) -> None:
        with self._lock:
            self._now = now_millis

    def now_millis(self) -> int:
        with self._lock:
            return self._now

    def pause_millis(self, millis: int) -> None:
        with self._lock:
            self._now += millis


def fault_proxy(request: str) -> str:
    """The fault proxy's reply to one control line (scripts/db/fault_proxy.py);
    a case that needs it fails, never skips, without ``MINTID_FAULT_PROXY``.
    """
    address = os.environ.get("MINTID_FAULT_PROXY")
    assert address, "MINTID_FAULT_PROXY is not set: run the tests through scripts/db/with-db.sh"
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as control:
        control.sendall(request.encode() + b"\n")
        reply = control.makefile("r").readline().strip()
    assert reply and not reply.startswith("error"), f"fault proxy: {request!r} -> {reply!r}"
    return reply


def environment(variable: str) -> str:
    """A server's variable from scripts/db/with-db.sh: skipped without it (failed under CI)."""
    value = os.environ.get(variable)
    if not value:
        message = f"{variable} is not set: run the tests through scripts/db/with-db.sh"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return value


def _url(variable: str) -> urllib.parse.SplitResult:
    return urllib.parse.urlsplit(environment(variable))


def _replace_path(url: urllib.parse.SplitResult, database: str) -> str:
    return urllib.parse.urlunsplit(url._replace(path=f"/{database}"))


class Server:
    """One dialect's server (or SQLite directory): empties a database for each case."""

    def __init__(self, dialect: str, directory: pathlib.Path) -> None:
        self.dialect = dialect
        self._directory = directory
        self._cases = 0
        self._path = ""
        self._proxy_port: int | None = None
        if dialect == "postgres":
            url = _url("MINTID_PG_URL")
            with psycopg.connect(urllib.parse.urlunsplit(url), autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
                admin.execute(f"CREATE DATABASE {DATABASE}")
            self._url = _replace_path(url, DATABASE)
        elif dialect == "mysql":
            url = _url("MINTID_MYSQL_URL")
            self._url = _replace_path(url, DATABASE)
            self._admin_url = url

    def proxied(self) -> str:
        """The case database's URL through a fault-proxy listener of its own
        (opened at the first call of a case; :meth:`outage` cuts it).
        """
        if self._proxy_port is None:
            parts = urllib.parse.urlsplit(self._url)
            self._proxy_port = int(fault_proxy(f"open {parts.hostname} {parts.port}"))
        parts = urllib.parse.urlsplit(self._url)
        user = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
        return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{self._proxy_port}"))

    def outage(self, millis: int) -> None:
        """Make the case's database unreachable for ``millis`` ms, returning once
        in force: the stores made on :meth:`proxied` lose their connections and
        are refused (the fault proxy's cut); SQLite, with no network, is locked
        by another connection's ``BEGIN EXCLUSIVE`` as long.
        """
        if self.dialect != "sqlite":
            assert self._proxy_port is not None, "no store was made on proxied()"
            assert fault_proxy(f"cut {self._proxy_port} {millis}") == "ok"
            return
        holder = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        holder.execute("BEGIN EXCLUSIVE")

        def release() -> None:
            time.sleep(millis / 1000)
            holder.execute("ROLLBACK")
            holder.close()

        threading.Thread(target=release, daemon=True).start()

    def at(self, url: str) -> Database:
        """A sync store on ``url`` (:meth:`proxied`'s) of this dialect."""
        if self.dialect == "postgres":
            return PostgresDatabase(url)
        return MySqlDatabase(url)

    def fresh(self) -> Factory:
        """An empty database (no tables) and a factory of stores on it; a store
        made with ``found_rows=True`` reports found rather than changed rows
        (MySQL's ``CLIENT_FOUND_ROWS``; the other dialects have no such option).
        """
        self._cases += 1
        if self._proxy_port is not None:
            fault_proxy(f"close {self._proxy_port}")
            self._proxy_port = None
        if self.dialect == "sqlite":
            path = str(self._directory / f"case-{self._cases}.sqlite3")
            self._path = path
            return lambda found_rows=False: SqliteDatabase(path)
        if self.dialect == "postgres":
            with psycopg.connect(self._url, autocommit=True) as conn:
                conn.execute("DROP SCHEMA IF EXISTS public CASCADE")
                conn.execute("CREATE SCHEMA public")
            url = self._url
            return lambda found_rows=False: PostgresDatabase(url)
        with self._mysql_admin() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
            cursor.execute(f"CREATE DATABASE {DATABASE}")
        url = self._url
        return lambda found_rows=False: MySqlDatabase(
            url, client_flag=CLIENT.FOUND_ROWS if found_rows else 0
        )

    @contextmanager
    def _mysql_admin(self) -> Iterator[Any]:
        parts = self._admin_url
        admin = pymysql.connect(
            host=parts.hostname,
            port=parts.port or 3306,
            user=parts.username,
            password=parts.password or "",
            autocommit=True,
        )
        try:
            with admin.cursor() as cursor:
                yield cursor
        finally:
            admin.close()

    def kill_connections(self) -> None:
        """End the server session of every connection to the case's database (none on SQLite)."""
        if self.dialect == "postgres":
            with psycopg.connect(self._url, autocommit=True) as conn:
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
        elif self.dialect == "mysql":
            with self._mysql_admin() as cursor:
                cursor.execute(
                    "SELECT id FROM information_schema.processlist WHERE db = %s", (DATABASE,)
                )
                for (session,) in cursor.fetchall():
                    with contextlib.suppress(pymysql.err.OperationalError):  # ended meanwhile
                        cursor.execute(f"KILL {int(session)}")

    def async_factory(
        self, driver: str = "psycopg", url: str | None = None
    ) -> Callable[..., AsyncDatabase]:
        """Async databases on the case :meth:`fresh` last emptied (same options),
        or on ``url`` (:meth:`proxied`'s); PostgreSQL's through ``driver``
        (``psycopg`` or ``asyncpg``).
        """
        if self.dialect == "sqlite":
            path = self._path
            return lambda found_rows=False: AsyncSqliteDatabase(path)
        url = url or self._url
        if self.dialect == "postgres" and driver == "asyncpg":
            return lambda found_rows=False: AsyncpgDatabase(url)
        if self.dialect == "postgres":
            return lambda found_rows=False: AsyncPostgresDatabase(url)
        return lambda found_rows=False: AsyncMySqlDatabase(
            url, client_flag=CLIENT.FOUND_ROWS if found_rows else 0
        )

    def unavailable_async(self, driver: str = "psycopg") -> AsyncDatabase:
        """An async database of this dialect pointing where no database is."""
        if self.dialect == "sqlite":
            return AsyncSqliteDatabase(str(self._directory / "missing" / "no.sqlite3"))
        if self.dialect == "postgres" and driver == "asyncpg":
            return AsyncpgDatabase("postgresql://mintid@127.0.0.1:1/none", timeout=2)
        if self.dialect == "postgres":
            return AsyncPostgresDatabase("postgresql://mintid@127.0.0.1:1/none", connect_timeout=2)
        return AsyncMySqlDatabase("mysql://mintid@127.0.0.1:1/none", connect_timeout=2)

    def unavailable(self) -> Database:
        """A store of this dialect pointing where no database is."""
        if self.dialect == "sqlite":
            return SqliteDatabase(str(self._directory / "missing" / "no.sqlite3"))
        if self.dialect == "postgres":
            return PostgresDatabase("postgresql://mintid@127.0.0.1:1/none", connect_timeout=2)
        return MySqlDatabase("mysql://mintid@127.0.0.1:1/none", connect_timeout=2)

    def business_table(self, database: Database) -> None:
        """The table that counts side effects (not part of the shared schema)."""
        column = {"sqlite": "TEXT", "postgres": 'text COLLATE "C"', "mysql": "VARBINARY(64)"}
        kind = column[self.dialect]
        with database.connection() as raw:
            database.execute(
                raw,
                f"CREATE TABLE conformance_side_effect (scope {kind} NOT NULL, "
                f"kind {kind} NOT NULL, key_id {kind} NOT NULL, worker {kind} NOT NULL)",
            )


def placeholder(database: Database) -> str:
    return "?" if database.dialect == "sqlite" else "%s"


def marks(database: Any, count: int) -> str:
    """``count`` placeholders of ``database``'s driver (an async database's behind a view)."""
    manifest = getattr(database, "inner", database).manifest
    if manifest.placeholder == ffi.Placeholder.NUMBERED:
        return ", ".join(f"${n}" for n in range(1, count + 1))
    return ", ".join([placeholder(database)] * count)


@contextmanager
def databases(factory: Factory) -> Iterator[Factory]:
    """Hand out stores from ``factory`` and close them all at the end."""
    made: list[Database] = []

    def make(found_rows: bool = False) -> Database:
        database = factory(found_rows=found_rows)
        made.append(database)
        return database

    try:
        yield make
    finally:
        for database in made:
            database.close()


def scalar(database: Database, sql: str, params: tuple[Any, ...] = ()) -> Any:
    """The first column of the first row of ``sql`` (driver placeholders)."""
    with database.connection() as raw:
        cursor = raw.cursor()
        try:
            cursor.execute(sql, params)
            row = cursor.fetchone()
        finally:
            cursor.close()
    return None if row is None else row[0]


class Kit:
    """The stores a lease, segment or outbox runner drives: mintid.store's
    (store/async_support.py has the async store's, behind sync views).
    """

    @contextmanager
    def databases(self, server: Server) -> Iterator[Factory]:
        """An emptied database of the case, and a factory of databases on it."""
        with databases(server.fresh()) as make:
            yield make

    def unavailable(self, server: Server) -> Any:
        return server.unavailable()

    def leases(self, database: Any, policy: LeasePolicy, clock: StoreClock | None = None) -> Any:
        return WorkerLeases(database, policy, clock=clock)

    def leased(self, leases: Any, owner: str, timeout_millis: int | None) -> Any:
        return LeasedSnowflake.acquire(leases, owner, timeout_millis)

    def segments(self, database: Any, tag: str, policy: SegmentPolicy, **options: Any) -> Any:
        return SegmentIds(database, tag, policy, **options)

    def segment_row(self, database: Any, tag: str) -> tuple[Any, ...] | None:
        """The tag's ``(max_id, step)``, or ``None``."""
        with database.connection() as raw:
            rows = database.query(raw, "segment_load", [tag])
        return tuple(rows[0]) if rows else None

    def outbox(self, database: Any, policy: RelayPolicy, **options: Any) -> Any:
        return Outbox(database, policy, **options)


SYNC = Kit()


@dataclass
class Faults:
    """The executor faults of one step: a lost reply (``lose_reply``), a
    database gone once the operation returned (``unavailable_after_operation``)
    and scripted mark failures (``mark_fails``).
    """

    #: The statement whose first run commits, then meets a closed connection.
    lose: str | None = None
    lost: bool = False
    #: Statements that meet a closed connection without running, once ``unavailable`` is set.
    unavailable_for: frozenset[str] = frozenset()
    unavailable: bool = False
    #: How many of the next outbox marks fail (class ``other``) without running.
    failing_marks: int = 0

    def fault(self, name: str) -> str | None:
        """What happens to the statement ``name`` about to run: ``lose``, ``gone``, ``fail``
        or nothing.
        """
        if self.unavailable and name in self.unavailable_for:
            return "gone"
        if self.failing_marks and name.startswith("outbox_mark_"):
            self.failing_marks -= 1
            return "fail"
        if name == self.lose and not self.lost:
            self.lost = True
            return "lose"
        return None


class ScriptedFailureError(Exception):
    """A statement failure the runner scripts (every executor classes it ``other``)."""


@contextmanager
def faulty(database: Any, faults: Faults) -> Iterator[None]:
    """``database``'s executor (a sync database, or the async one under a
    runner's view) with ``faults``, for one step. A lost reply runs the
    statement to its end (outside a transaction: committed), closes the
    connection and runs it again there, so the executor reports what its own
    library says of a closed connection; a gone database only closes it and runs
    the statement there.
    """
    inner = getattr(database, "inner", None)
    target = database if inner is None else inner
    original = target.run

    def sync_run(raw: Any, name: str, params: list[Any]) -> Any:
        fault = faults.fault(name)
        if fault == "fail":
            raise ScriptedFailureError(f"scripted failure of {name}")
        if fault == "lose":
            original(raw, name, params)
        if fault in ("lose", "gone"):
            raw.close()
        return original(raw, name, params)

    async def async_run(raw: Any, name: str, params: list[Any]) -> Any:
        fault = faults.fault(name)
        if fault == "fail":
            raise ScriptedFailureError(f"scripted failure of {name}")
        if fault == "lose":
            await original(raw, name, params)
        if fault in ("lose", "gone"):
            await target._close(raw)
        return await original(raw, name, params)

    target.run = sync_run if inner is None else async_run
    try:
        yield
    finally:
        del target.run
    assert faults.lose is None or faults.lost, f"no {faults.lose} statement ran"


def in_forked_child(action: Callable[[], Any]) -> Any:
    """``action``'s result, computed in a forked child process."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave without running any cleanup
        os.close(read)
        try:
            got: Any = action()
        except BaseException as error:
            got = AssertionError(f"the child failed: {error!r}")
        with os.fdopen(write, "wb") as pipe:
            pickle.dump(got, pipe)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        got = pickle.load(pipe)
    assert os.waitpid(pid, 0)[1] == 0, "the child exited with an error"
    if isinstance(got, AssertionError):
        raise got
    return got
