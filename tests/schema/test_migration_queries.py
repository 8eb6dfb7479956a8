"""The migration queries (migration_lock, migration_unlock, migrations_table,
applied_migrations) of every dialect, at the SQL level: the lock keeps two sessions apart,
and migrators starting at once, each taking the steps of the core's migration driver
(docs/spec.md, "The migration driver"), apply each migration once."""

import threading
import time

import pytest

from conftest import Db, fresh_database
from named_queries import DIALECTS, migrations

VERSIONS = [int(name[:4]) for name, _ in migrations("postgres")]


def locked(db: Db) -> int | None:
    return db.run("migration_lock")["locked"]


def applied(db: Db) -> list[int]:
    return [row["version"] for row in db.run("applied_migrations")]


def migrate(db: Db) -> list[int]:
    """The driver's steps, one connection: the versions this run applied."""
    while locked(db) != 1:
        time.sleep(0.01)
    try:
        db.run("migrations_table")
        done = []
        for name, statements in migrations(db.dialect):
            version = int(name[:4])
            if version in applied(db):
                continue
            db.execute("BEGIN IMMEDIATE" if db.dialect == "sqlite" else "BEGIN")
            try:
                if version not in applied(db):
                    for statement in statements:
                        db.execute(statement)
                    done.append(version)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return done
    finally:
        db.run("migration_unlock")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_lock_keeps_another_session_out_until_given_back(dialect, tmp_path):
    connect = fresh_database(dialect, "mintid_schema_lock", tmp_path)
    first, second = connect(), connect()
    try:
        assert locked(first) == 1
        assert locked(first) == 1, "the holder takes it again"
        assert first.run("migration_unlock")["released"] == 1
        if dialect == "sqlite":
            assert locked(second) == 1, "SQLite's lock is its write transactions"
            return
        assert locked(second) == 0, "still held once"
        assert first.run("migration_unlock")["released"] == 1
        assert not first.run("migration_unlock")["released"], "0, or NULL (MySQL): not held"
        assert locked(second) == 1
        assert locked(first) == 0
        second.run("migration_unlock")
        third = connect()
        assert locked(third) == 1
        third.close()
        # The server ends the closed session's backend a moment after the client closes it.
        given_back = time.monotonic() + 10
        while locked(first) != 1:
            assert time.monotonic() < given_back, "a closed session gives its lock back"
            time.sleep(0.01)
        first.run("migration_unlock")
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_versions_table_is_created_once_and_read_in_order(dialect, tmp_path):
    db = fresh_database(dialect, "mintid_schema_versions", tmp_path)()
    try:
        with pytest.raises(Exception):
            applied(db)
        if dialect == "postgres":
            db.conn.rollback()
        assert db.run("migrations_table") is None
        assert applied(db) == []
        assert migrate(db) == VERSIONS, "the files run under the session lock"
        db.run("migrations_table")
        assert applied(db) == VERSIONS
        assert migrate(db) == []
    finally:
        db.close()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_migrators_starting_at_once_apply_each_migration_once(dialect, tmp_path):
    connect = fresh_database(dialect, "mintid_schema_race", tmp_path)
    sessions = [connect() for _ in range(4)]
    start = threading.Barrier(len(sessions))
    results: list[list[int]] = []
    errors: list[BaseException] = []

    def run(db: Db) -> None:
        start.wait()
        try:
            results.append(migrate(db))
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(db,)) for db in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert errors == []
        assert sorted(v for result in results for v in result) == VERSIONS, results
        assert applied(sessions[0]) == VERSIONS
    finally:
        for db in sessions:
            db.close()
