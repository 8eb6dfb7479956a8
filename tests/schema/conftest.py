"""Connections to the three dialects for the SQL-level schema tests.

PostgreSQL and MariaDB come from scripts/db/up.sh (MINTID_PG_URL, MINTID_MYSQL_URL, set
by scripts/db/with-db.sh); SQLite is a file in pytest's temporary directory. Each test
session works in its own databases (mintid_schema_*), created afresh.
"""

import os
import sqlite3
import urllib.parse
from collections.abc import Callable, Iterator

import psycopg
import pymysql
import pytest

from named_queries import DIALECTS, Query, load_queries, migrations


class Db:
    """One connection of one dialect, running named queries and migrations."""

    def __init__(self, dialect: str, conn, queries: dict[str, Query]):
        self.dialect = dialect
        self.conn = conn
        self.queries = queries

    def run(self, name: str, **params):
        """Runs a named query: a dict or None (:one), dicts (:many), a row count (:execrows)."""
        query = self.queries[name]
        missing = sorted(set(query.params) - params.keys())
        unused = sorted(params.keys() - set(query.params))
        assert not missing and not unused, f"{name}: missing {missing}, unused {unused}"
        cur = self.conn.cursor()
        try:
            cur.execute(query.sql, [params[name] for name in query.params])
            if query.kind == ":execrows":
                return cur.rowcount
            if query.kind == ":exec":
                return None
            names = [column[0] for column in cur.description]
            rows = [dict(zip(names, row)) for row in cur.fetchall()]
            if query.kind == ":many":
                return rows
            assert len(rows) <= 1, f"{name} returned {len(rows)} rows"
            return rows[0] if rows else None
        finally:
            cur.close()

    def execute(self, sql: str, params=None) -> list[tuple]:
        """Runs plain SQL (driver placeholders) and returns its rows, if any."""
        cur = self.conn.cursor()
        try:
            cur.execute(sql, params) if params is not None else cur.execute(sql)
            return list(cur.fetchall()) if cur.description else []
        finally:
            cur.close()

    def migrate(self) -> None:
        """Applies every migration file, each in one transaction where the dialect allows."""
        for _name, statements in migrations(self.dialect):
            self.execute("BEGIN")
            for statement in statements:
                self.execute(statement)
            self.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()


def _url(variable: str) -> urllib.parse.SplitResult:
    value = os.environ.get(variable)
    if not value:
        pytest.fail(f"{variable} is not set: run the tests through scripts/db/with-db.sh")
    return urllib.parse.urlsplit(value)


def _pg_connect(url: urllib.parse.SplitResult, database: str):
    return psycopg.connect(
        host=url.hostname, port=url.port, user=url.username, password=url.password,
        dbname=database, autocommit=True)


def _mysql_connect(url: urllib.parse.SplitResult, database: str | None, client_flag: int = 0):
    return pymysql.connect(
        host=url.hostname, port=url.port, user=url.username, password=url.password,
        database=database, autocommit=True, client_flag=client_flag)


def fresh_database(dialect: str, name: str, tmp_dir) -> Callable[..., Db]:
    """Creates (or re-creates) an empty database and returns a connection factory for it."""
    queries = load_queries(dialect)
    if dialect == "sqlite":
        path = tmp_dir / f"{name}.sqlite3"
        path.unlink(missing_ok=True)

        def connect(**_options) -> Db:
            conn = sqlite3.connect(path, isolation_level=None, timeout=30,
                                   check_same_thread=False)
            conn.execute("PRAGMA journal_mode = WAL")
            return Db(dialect, conn, queries)

        return connect
    if dialect == "postgres":
        url = _url("MINTID_PG_URL")
        with _pg_connect(url, url.path.lstrip("/")) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            admin.execute(f"CREATE DATABASE {name}")
        return lambda **_options: Db(dialect, _pg_connect(url, name), queries)
    url = _url("MINTID_MYSQL_URL")
    admin = _mysql_connect(url, None)
    try:
        admin.cursor().execute(f"DROP DATABASE IF EXISTS {name}")
        admin.cursor().execute(f"CREATE DATABASE {name}")
    finally:
        admin.close()
    return lambda client_flag=0: Db(dialect, _mysql_connect(url, name, client_flag), queries)


@pytest.fixture(scope="session", params=DIALECTS)
def connect(request, tmp_path_factory) -> Iterator[Callable[..., Db]]:
    """A factory of connections to this session's migrated test database of one dialect."""
    factory = fresh_database(request.param, "mintid_schema_tests", tmp_path_factory.mktemp("db"))
    db = factory()
    db.migrate()
    db.close()
    yield factory


@pytest.fixture
def db(connect) -> Iterator[Db]:
    """A connection to an emptied idempotency_record table."""
    db = connect()
    db.execute("DELETE FROM idempotency_record")
    yield db
    db.close()
