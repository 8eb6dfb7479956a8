"""Idempotency storage in Python: mintid.store beside idemkit, on one PostgreSQL.

Run by ``make bench-python`` inside ``scripts/db/with-db.sh`` (MINTID_PG_URL).
One operation is a fresh key run once: claim, run a trivial operation, store
its response (mintid: ``IdempotencyStore.run_once``, two round trips; idemkit
1.0.2: an ``@idempotent`` function called with a new argument, its
PostgresBackend on asyncpg), beside the raw floor of the same two statements
(psycopg; sqlite3 on SQLite). With 1 and 8 threads (idemkit: 1 and 8 tasks on one event loop,
a pool of as many connections). Rounds interleave the packages; each row is
the round with the median throughput: operations per second, p50/p99 latency.
Then, for leases, segments and the outbox: segment IDs per call beside a
Snowflake, a lease acquisition, and relay throughput.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import pathlib
import sqlite3
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable
from functools import partial
from typing import Any

import psycopg
from idemkit import MethodConfig, PostgresBackend, idempotent
from idemkit.backends.postgres import init_pg

from mintid import (
    Fingerprint,
    IdempotencyKey,
    LeasePolicy,
    RecordPolicy,
    RelayPolicy,
    SegmentPolicy,
    Snowflake,
    SnowflakeLayout,
)
from mintid.store import (
    Database,
    IdempotencyStore,
    Outbox,
    OutboxMessage,
    PostgresDatabase,
    SegmentIds,
    SqliteDatabase,
    StoredResponse,
    StoreRequest,
    WorkerLeases,
)

RESPONSE = StoredResponse("application/json", b'{"ok":true}')
Row = tuple[str, str, int, float, float, float]
NOSYNC = "-c synchronous_commit=off"


def summary(name: str, where: str, threads: int, latencies: list[int], seconds: float) -> Row:
    latencies.sort()
    p50 = latencies[len(latencies) // 2] / 1e6
    p99 = latencies[min(len(latencies) - 1, len(latencies) * 99 // 100)] / 1e6
    return name, where, threads, len(latencies) / seconds, p50, p99


def bench_mintid(database: Database, where: str, threads: int, seconds: float) -> Row:
    store = IdempotencyStore(database, RecordPolicy())
    request = StoreRequest(Fingerprint(bytes(32)))
    counter = itertools.count()
    latencies: list[int] = []
    lock = threading.Lock()
    barrier = threading.Barrier(threads + 1)
    deadline = [0.0]
    run = os.urandom(4).hex()

    def work() -> None:
        mine: list[int] = []
        barrier.wait()
        while time.perf_counter() < deadline[0]:
            key = IdempotencyKey("bench.op", "tenant-1", f"{run}-{next(counter)}")
            started = time.perf_counter_ns()
            store.run_once(key, request, lambda: RESPONSE)
            mine.append(time.perf_counter_ns() - started)
        with lock:
            latencies.extend(mine)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    deadline[0] = time.perf_counter() + seconds
    barrier.wait()
    for worker in workers:
        worker.join()
    return summary("mintid.store", where, threads, latencies, seconds)


RAW_CLAIM = (
    "INSERT INTO idempotency_record (scope, kind, key_id, fingerprint, status, fencing_token, "
    "lease_deadline_millis, created_millis, updated_millis, expires_millis) "
    "VALUES ('raw', 'bench.op', %s, %s, 'pending', 1, %s, %s, %s, %s) "
    "ON CONFLICT (scope, kind, key_id) DO NOTHING RETURNING fencing_token"
)
RAW_COMPLETE = (
    "UPDATE idempotency_record SET status = 'succeeded', response_body = %s, "
    "response_content_type = %s, updated_millis = %s "
    "WHERE scope = 'raw' AND kind = 'bench.op' AND key_id = %s AND fencing_token = 1"
)


def _raw_floor(
    name: str, where: str, threads: int, seconds: float, connect: Callable[[], Any], mark: str
) -> Row:
    """The floor: the claim and complete statements (placeholders ``mark``) on one
    connection per thread from ``connect``, no rules, no pool.
    """
    claim_sql, complete_sql = RAW_CLAIM.replace("%s", mark), RAW_COMPLETE.replace("%s", mark)
    counter = itertools.count()
    latencies: list[int] = []
    lock = threading.Lock()
    run = os.urandom(4).hex()
    deadline = time.perf_counter() + seconds

    def work() -> None:
        mine: list[int] = []
        conn = connect()
        try:
            while time.perf_counter() < deadline:
                key = f"{run}-{next(counter)}"
                now = time.time_ns() // 1_000_000
                started = time.perf_counter_ns()
                claim = (key, bytes(32), now + 60_000, now, now, now + 1)
                conn.execute(claim_sql, claim).fetchall()
                conn.execute(complete_sql, (RESPONSE.body, RESPONSE.content_type, now, key))
                mine.append(time.perf_counter_ns() - started)
        finally:
            conn.close()
        with lock:
            latencies.extend(mine)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return summary(name, where, threads, latencies, seconds)


def bench_raw(url: str, where: str, threads: int, seconds: float, options: str = "") -> Row:
    """The PostgreSQL floor: the same two statements from psycopg."""
    return _raw_floor(
        "raw psycopg (floor)",
        where,
        threads,
        seconds,
        lambda: psycopg.connect(url, autocommit=True, options=options),
        "%s",
    )


def bench_raw_sqlite(path: str, threads: int, seconds: float) -> Row:
    """The SQLite floor: the same two statements from :mod:`sqlite3` on the same
    WAL file, one connection per thread as the store opens them.
    """

    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(path, isolation_level=None, timeout=30.0, check_same_thread=False)
        conn.execute("PRAGMA journal_mode = WAL")
        return conn

    return _raw_floor("raw sqlite3 (floor)", "SQLite", threads, seconds, connect, "?")


def bench_idemkit(url: str, where: str, tasks: int, seconds: float, settings: str = "on") -> Row:
    async def main() -> list[int]:
        backend = PostgresBackend.from_url(
            url,
            min_size=tasks,
            max_size=tasks,
            server_settings={"synchronous_commit": settings},
        )
        counter = itertools.count()
        latencies: list[int] = []

        @idempotent(backend=backend, config=MethodConfig())  # type: ignore[untyped-decorator]
        async def operation(n: str) -> dict[str, Any]:
            return {"ok": True, "n": n}

        run = os.urandom(4).hex()  # every call a fresh key, in every round
        await operation(f"{run}-warm-up")  # opens the pool and checks the schema
        deadline = time.perf_counter() + seconds

        async def work() -> None:
            while time.perf_counter() < deadline:
                started = time.perf_counter_ns()
                await operation(f"{run}-{next(counter)}")
                latencies.append(time.perf_counter_ns() - started)

        await asyncio.gather(*(work() for _ in range(tasks)))
        await backend.aclose()
        return latencies

    return summary("idemkit 1.0.2", where, tasks, asyncio.run(main()), seconds)


def bench_segments(database: Database, count: int) -> list[str]:
    """Segment IDs per call in the steady state, beside a Snowflake from the same package."""
    ids = SegmentIds(database, f"bench-{os.urandom(4).hex()}", SegmentPolicy(1000, 1000, 100_000))
    for _ in range(count):  # warm up: the step grows, the prefetch thread settles
        ids.next_id()
    started = time.perf_counter_ns()
    for _ in range(count):
        ids.next_id()
    segment_ns = (time.perf_counter_ns() - started) / count
    snowflake = Snowflake(worker=1, layout=SnowflakeLayout.preset("classic"))
    started = time.perf_counter_ns()
    for _ in range(count):
        snowflake.next_id()
    snowflake_ns = (time.perf_counter_ns() - started) / count
    return [
        f"| `SegmentIds.next_id()` (PostgreSQL, steady state) | {segment_ns:,.0f} ns per ID |",
        f"| `Snowflake.next_id()` (classic layout), same loop | {snowflake_ns:,.0f} ns per ID |",
    ]


def bench_leases(database: Database, rounds: int) -> list[str]:
    """One acquisition (find, take, commit) and one release, as a restarting process does."""
    leases = WorkerLeases(database, LeasePolicy("classic"))
    times: list[int] = []
    for n in range(rounds):
        started = time.perf_counter_ns()
        guard = leases.acquire(f"bench-{n}")
        times.append(time.perf_counter_ns() - started)
        leases.release(guard, guard.start_after_millis)
    times.sort()
    return [
        f"| `WorkerLeases.acquire()` (PostgreSQL), median | {times[rounds // 2] / 1e6:.2f} ms |"
    ]


def bench_outbox(make: Callable[[], Database], messages: int, relays: int) -> str:
    """Messages relayed per second by ``relays`` threads, each with its own pool."""
    database = make()
    outbox = Outbox(database, RelayPolicy(100, 60_000))
    run = os.urandom(4).hex()
    with database.transaction() as conn:
        for n in range(messages):
            outbox.enqueue(conn, OutboxMessage(n + 1, "bench", f"{run}-{n}", b"{}"))
    started = time.perf_counter()

    def relay() -> None:
        own = make()
        Outbox(own, RelayPolicy(100, 60_000)).relay(lambda _message: None)
        own.close()

    workers = [threading.Thread(target=relay) for _ in range(relays)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    rate = messages / (time.perf_counter() - started)
    database.close()
    who = "1 relay" if relays == 1 else f"{relays} relays"
    return f"| `Outbox.relay()` (PostgreSQL), {who} | {rate:,.0f} messages/s |"


def fresh_postgres(base: str, name: str) -> str:
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    return urllib.parse.urlunsplit(urllib.parse.urlsplit(base)._replace(path=f"/{name}"))


def arguments(description: str | None) -> tuple[argparse.Namespace, str]:
    """``--seconds`` and ``--rounds``, and the server's URL (``MINTID_PG_URL``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="measurements per row")
    args = parser.parse_args()
    base = os.environ.get("MINTID_PG_URL")
    if not base:
        raise SystemExit("MINTID_PG_URL is not set: run through scripts/db/with-db.sh")
    return args, base


def main() -> None:
    args, base = arguments(__doc__)
    rows: list[Row] = []
    pg_url = fresh_postgres(base, "mintid_bench")
    peer_url = fresh_postgres(base, "mintid_bench_idemkit")
    asyncio.run(init_pg(peer_url))
    with tempfile.TemporaryDirectory() as directory:
        sqlite_path = str(pathlib.Path(directory) / "bench.sqlite3")
        sqlite = SqliteDatabase(sqlite_path)
        postgres = PostgresDatabase(pg_url)
        # The same without waiting for the disk at each commit: the client's own cost.
        nosync = "PostgreSQL, synchronous_commit off"
        postgres_nosync = PostgresDatabase(pg_url, options=NOSYNC)
        databases: list[tuple[str, Database]] = [
            ("PostgreSQL", postgres),
            (nosync, postgres_nosync),
            ("SQLite", sqlite),
        ]
        for _where, database in databases:
            database.migrate()
        runs: list[Callable[[], Row]] = []
        for threads in (1, 8):
            seconds = args.seconds
            runs.append(partial(bench_mintid, postgres, "PostgreSQL", threads, seconds))
            runs.append(partial(bench_idemkit, peer_url, "PostgreSQL", threads, seconds))
            runs.append(partial(bench_raw, pg_url, "PostgreSQL", threads, seconds))
            runs.append(partial(bench_mintid, postgres_nosync, nosync, threads, seconds))
            runs.append(partial(bench_idemkit, peer_url, nosync, threads, seconds, "off"))
            runs.append(partial(bench_raw, pg_url, nosync, threads, seconds, NOSYNC))
            runs.append(partial(bench_mintid, sqlite, "SQLite", threads, seconds))
            runs.append(partial(bench_raw_sqlite, sqlite_path, threads, seconds))
        # Rounds interleave the packages, so a change of load hits them alike;
        # each row is the round with the median throughput.
        results: list[list[Row]] = [[] for _ in runs]
        for _round in range(args.rounds):
            for index, run in enumerate(runs):
                results[index].append(run())
        for measured in results:
            measured.sort(key=lambda row: row[3])
            rows.append(measured[len(measured) // 2])
        for _where, database in databases:
            database.close()
    pg_extra = fresh_postgres(base, "mintid_bench_extra")
    extra = PostgresDatabase(pg_extra)
    extra.migrate()
    lines = bench_segments(extra, 200_000) + bench_leases(extra, 50)
    with extra.connection() as conn:
        extra.execute(conn, "DELETE FROM outbox_message")
    for relays in (1, 4):
        lines.append(bench_outbox(partial(PostgresDatabase, pg_extra), 2000, relays))
        with extra.connection() as conn:
            extra.execute(conn, "DELETE FROM outbox_message")
    extra.close()
    print("| package | database | threads | ops/s | p50 ms | p99 ms |")
    print("|---|---|---:|---:|---:|---:|")
    rows.sort(key=lambda row: (row[1], row[2]))
    for name, where, threads, rate, p50, p99 in rows:
        print(f"| {name} | {where} | {threads} | {rate:,.0f} | {p50:.2f} | {p99:.2f} |")
    print()
    print("| leases, segments, outbox | figure |")
    print("|---|---:|")
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
