"""The asyncio store on PostgreSQL: mintid.store.aio beside idemkit and a raw async floor.

One operation is a fresh key run once: claim, run a trivial coroutine, store its
response. Three contenders, in the same run on the same server:

* ``AsyncIdempotencyStore.run_once`` over ``AsyncPostgresDatabase`` on an app's
  ``psycopg_pool.AsyncConnectionPool`` of as many connections as tasks (two round
  trips: the claim and the completion);
* idemkit 1.0.2's ``@idempotent`` on its asyncpg ``PostgresBackend``, a pool of
  as many connections (``bench_store.bench_idemkit``);
* the raw floor: the same two statements (claim ``INSERT … ON CONFLICT DO NOTHING
  RETURNING``, complete ``UPDATE … WHERE fencing_token``) from psycopg 3's
  ``AsyncConnection``, one connection per task, no rules.

With 1 and 32 concurrent tasks on one event loop. Rounds interleave the three, so
a change of load hits them alike; each row is the round with the median
throughput: operations per second, p50/p99 latency. The issue's targets: mintid
at least 2x idemkit and at least 80% of the floor, at 1 and at 32 tasks.

Run it (also part of ``make bench-python``), from the repository root, with the
benchmark venv that ``make bench-python`` makes:

    scripts/db/with-db.sh .venv/python-bench/bin/python -W ignore \
        python/bench/bench_store_aio.py --seconds 3 --rounds 3

A smoke run: ``--seconds 0.2 --rounds 2``.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections.abc import Awaitable, Callable
from functools import partial

import psycopg
from bench_store import (
    RAW_CLAIM,
    RAW_COMPLETE,
    RESPONSE,
    Row,
    arguments,
    bench_idemkit,
    fresh_postgres,
    summary,
)
from idemkit.backends.postgres import init_pg
from psycopg_pool import AsyncConnectionPool

from mintid import Fingerprint, IdempotencyKey, RecordPolicy
from mintid.store import StoredResponse, StoreRequest
from mintid.store.aio import AsyncIdempotencyStore, AsyncPostgresDatabase

TASKS = (1, 32)


async def _measure(tasks: int, seconds: float, one: Callable[[int], Awaitable[None]]) -> list[int]:
    """Latencies (ns) of ``one(n)`` called back to back by ``tasks`` tasks for ``seconds``."""
    counter = itertools.count()
    latencies: list[int] = []
    deadline = time.perf_counter() + seconds

    async def work() -> None:
        while time.perf_counter() < deadline:
            started = time.perf_counter_ns()
            await one(next(counter))
            latencies.append(time.perf_counter_ns() - started)

    await asyncio.gather(*(work() for _ in range(tasks)))
    return latencies


def bench_mintid_aio(url: str, tasks: int, seconds: float) -> Row:
    async def main() -> list[int]:
        pool = AsyncConnectionPool(url, min_size=tasks, max_size=tasks, open=False)
        await pool.open(wait=True)
        store = AsyncIdempotencyStore(AsyncPostgresDatabase(pool), RecordPolicy())
        request = StoreRequest(Fingerprint(bytes(32)))
        run = os.urandom(4).hex()  # every call a fresh key, in every round

        async def operation() -> StoredResponse:
            return RESPONSE

        async def one(n: int) -> None:
            key = IdempotencyKey("bench.op", "tenant-1", f"{run}-{n}")
            await store.run_once(key, request, operation)

        try:
            return await _measure(tasks, seconds, one)
        finally:
            await store.database.close()
            await pool.close()

    return summary("mintid.store.aio", "PostgreSQL", tasks, asyncio.run(main()), seconds)


def bench_raw_aio(url: str, tasks: int, seconds: float) -> Row:
    """The floor: the claim and the completion from psycopg's ``AsyncConnection``,
    one connection per task.
    """

    async def main() -> list[int]:
        conns = [await psycopg.AsyncConnection.connect(url, autocommit=True) for _ in range(tasks)]
        free = list(conns)
        run = os.urandom(4).hex()

        async def one(n: int) -> None:
            # Each task holds one connection for the whole call, as a task of the floor would.
            conn = free.pop()
            try:
                key = f"{run}-{n}"
                now = time.time_ns() // 1_000_000
                claim = (key, bytes(32), now + 60_000, now, now, now + 1)
                await (await conn.execute(RAW_CLAIM, claim)).fetchall()
                await conn.execute(RAW_COMPLETE, (RESPONSE.body, RESPONSE.content_type, now, key))
            finally:
                free.append(conn)

        try:
            return await _measure(tasks, seconds, one)
        finally:
            for conn in conns:
                await conn.close()

    return summary("raw psycopg async (floor)", "PostgreSQL", tasks, asyncio.run(main()), seconds)


def main() -> None:
    args, base = arguments(__doc__)
    url = fresh_postgres(base, "mintid_bench_aio")
    peer_url = fresh_postgres(base, "mintid_bench_aio_idemkit")
    asyncio.run(init_pg(peer_url))

    async def migrate() -> None:
        database = AsyncPostgresDatabase(url)
        await database.migrate()
        await database.close()

    asyncio.run(migrate())
    runs: list[Callable[[], Row]] = []
    for tasks in TASKS:
        runs.append(partial(bench_mintid_aio, url, tasks, args.seconds))
        runs.append(partial(bench_idemkit, peer_url, "PostgreSQL", tasks, args.seconds))
        runs.append(partial(bench_raw_aio, url, tasks, args.seconds))
    results: list[list[Row]] = [[] for _ in runs]
    for _round in range(args.rounds):
        for index, run in enumerate(runs):
            results[index].append(run())
    print("| package | database | tasks | ops/s | p50 ms | p99 ms |")
    print("|---|---|---:|---:|---:|---:|")
    for measured in results:
        measured.sort(key=lambda row: row[3])
        name, where, tasks, rate, p50, p99 = measured[len(measured) // 2]
        print(f"| {name} | {where} | {tasks} | {rate:,.0f} | {p50:.2f} | {p99:.2f} |")


if __name__ == "__main__":
    main()
