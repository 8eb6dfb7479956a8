"""Idempotency storage in Python: mintid.store beside idemkit, on one PostgreSQL.

Run by ``make bench-python`` inside ``scripts/db/with-db.sh`` (MINTID_PG_URL).
One operation is a fresh key run once: claim, run a trivial operation, store
its response (mintid: ``IdempotencyStore.run_once``, two round trips; idemkit
1.0.2: an ``@idempotent`` function called with a new argument, its
PostgresBackend on asyncpg). Reported: operations per second and p50/p99
latency, with 1 and 8 threads (idemkit: 1 and 8 tasks on one event loop with
a pool of as many connections).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import pathlib
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

from mintid import Fingerprint, IdempotencyKey, RecordPolicy
from mintid.store import (
    Database,
    IdempotencyStore,
    PostgresDatabase,
    SqliteDatabase,
    StoredResponse,
    StoreRequest,
)

RESPONSE = StoredResponse("application/json", b'{"ok":true}')
Row = tuple[str, str, int, float, float, float]


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


def bench_raw(url: str, threads: int, seconds: float) -> Row:
    """The floor: the same two statements from psycopg, no rules, no pool."""
    counter = itertools.count()
    latencies: list[int] = []
    lock = threading.Lock()
    run = os.urandom(4).hex()
    deadline = time.perf_counter() + seconds

    def work() -> None:
        mine: list[int] = []
        with psycopg.connect(url, autocommit=True) as conn:
            while time.perf_counter() < deadline:
                key = f"{run}-{next(counter)}"
                now = time.time_ns() // 1_000_000
                started = time.perf_counter_ns()
                claim = (key, bytes(32), now + 60_000, now, now, now + 1)
                conn.execute(RAW_CLAIM, claim).fetchall()
                conn.execute(RAW_COMPLETE, (RESPONSE.body, RESPONSE.content_type, now, key))
                mine.append(time.perf_counter_ns() - started)
        with lock:
            latencies.extend(mine)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return summary("raw psycopg (floor)", "PostgreSQL", threads, latencies, seconds)


def bench_idemkit(url: str, tasks: int, seconds: float) -> Row:
    async def main() -> list[int]:
        backend = PostgresBackend.from_url(url, min_size=tasks, max_size=tasks)
        counter = itertools.count()
        latencies: list[int] = []

        @idempotent(backend=backend, config=MethodConfig())  # type: ignore[untyped-decorator]
        async def operation(n: int) -> dict[str, Any]:
            return {"ok": True, "n": n}

        await operation(-1)  # opens the pool and checks the schema
        deadline = time.perf_counter() + seconds

        async def work() -> None:
            while time.perf_counter() < deadline:
                started = time.perf_counter_ns()
                await operation(next(counter))
                latencies.append(time.perf_counter_ns() - started)

        await asyncio.gather(*(work() for _ in range(tasks)))
        await backend.aclose()
        return latencies

    return summary("idemkit 1.0.2", "PostgreSQL", tasks, asyncio.run(main()), seconds)


def fresh_postgres(base: str, name: str) -> str:
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    return urllib.parse.urlunsplit(urllib.parse.urlsplit(base)._replace(path=f"/{name}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    args = parser.parse_args()
    base = os.environ.get("MINTID_PG_URL")
    if not base:
        raise SystemExit("MINTID_PG_URL is not set: run through scripts/db/with-db.sh")
    rows: list[Row] = []
    pg_url = fresh_postgres(base, "mintid_bench")
    peer_url = fresh_postgres(base, "mintid_bench_idemkit")
    asyncio.run(init_pg(peer_url))
    with tempfile.TemporaryDirectory() as directory:
        sqlite = SqliteDatabase(str(pathlib.Path(directory) / "bench.sqlite3"))
        postgres = PostgresDatabase(pg_url)
        databases: list[tuple[str, Database]] = [("PostgreSQL", postgres), ("SQLite", sqlite)]
        for _where, database in databases:
            database.migrate()
        runs: list[Callable[[], Row]] = []
        for threads in (1, 8):
            runs.append(partial(bench_mintid, postgres, "PostgreSQL", threads, args.seconds))
            runs.append(partial(bench_idemkit, peer_url, threads, args.seconds))
            runs.append(partial(bench_raw, pg_url, threads, args.seconds))
            runs.append(partial(bench_mintid, sqlite, "SQLite", threads, args.seconds))
        for run in runs:
            rows.append(run())
        for _where, database in databases:
            database.close()
    print("| package | database | threads | ops/s | p50 ms | p99 ms |")
    print("|---|---|---:|---:|---:|---:|")
    for name, where, threads, rate, p50, p99 in rows:
        print(f"| {name} | {where} | {threads} | {rate:,.0f} | {p50:.2f} | {p99:.2f} |")


if __name__ == "__main__":
    main()
