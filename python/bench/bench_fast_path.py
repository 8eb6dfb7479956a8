"""The Redis fast path in Python: replays and fresh keys, with and without it.

Run by ``make bench-python-fast-path`` inside ``scripts/db/with-db.sh``
(MINTID_PG_URL, MINTID_REDIS_CLUSTER): the same PostgreSQL and the same
Redis Cluster for every row. With ``--clients`` threads (8 by default):

* replay, database only: ``run_once`` on keys already completed, the store
  without a fast path (one ``load`` round trip to PostgreSQL);
* replay, fast path: the same keys through a store with ``RedisFastPath``
  (one ``EVALSHA`` on the cluster, no database);
* fresh key, database only / fast path: new keys run once (claim, a trivial
  operation, complete), and with the fast path its check before and its
  write after.

Rounds interleave the rows; each row is the round with the median
throughput: operations per second, p50/p99 latency. The last lines are the
replay speed-up and the fresh-key overhead of the fast path.
"""

from __future__ import annotations

import argparse
import itertools
import os
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import redis.cluster
from redis.backoff import NoBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

from mintid import IdempotencyKey, RecordPolicy, fingerprint_bytes
from mintid.store import IdempotencyStore, PostgresDatabase, StoredResponse, StoreRequest
from mintid.store.fast_path import RedisFastPath

REQUEST = StoreRequest(fingerprint_bytes(b'{"sku":"tea","qty":2}'))
RESPONSE = StoredResponse("application/json", b'{"order":1001}')
REPLAY_KEYS = 1000
#: redis-py's node class (untyped constructor).
ClusterNode: Any = redis.cluster.ClusterNode


def _cluster() -> RedisCluster:
    nodes = [node.rsplit(":", 1) for node in os.environ["MINTID_REDIS_CLUSTER"].split(",")]
    return RedisCluster(
        startup_nodes=[ClusterNode(host, int(port)) for host, port in nodes],
        socket_timeout=0.1,
        socket_connect_timeout=0.1,
        retry=Retry(NoBackoff(), 0),
    )


def _measure(
    clients: int, seconds: float, one: Callable[[int], None]
) -> tuple[float, float, float]:
    """``one(worker)`` from ``clients`` threads for ``seconds``: ops/s, p50 and p99 (µs)."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    start = threading.Barrier(clients + 1)
    end = 0.0

    def work(worker: int) -> None:
        times = latencies[worker]
        start.wait()
        while True:
            began = time.perf_counter()
            if began >= end:
                return
            one(worker)
            times.append(time.perf_counter() - began)

    threads = [threading.Thread(target=work, args=(worker,)) for worker in range(clients)]
    for thread in threads:
        thread.start()
    end = time.perf_counter() + seconds
    start.wait()
    for thread in threads:
        thread.join()
    every = sorted(itertools.chain.from_iterable(latencies))
    p50 = every[len(every) // 2] * 1e6
    p99 = every[min(len(every) - 1, len(every) * 99 // 100)] * 1e6
    return len(every) / seconds, p50, p99


def main() -> None:
    """Measure, print one line per row."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per row and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()

    database = PostgresDatabase(os.environ["MINTID_PG_URL"])
    database.migrate()
    client = _cluster()
    fast = RedisFastPath(client)
    policy = RecordPolicy()
    plain = IdempotencyStore(database, policy)
    fronted = IdempotencyStore(database, policy, fast_path=fast)
    scope = f"bench-{uuid.uuid4().hex[:12]}"
    done = [IdempotencyKey("order", scope, f"replay-{i}") for i in range(REPLAY_KEYS)]
    for key in done:  # completed through the fast path: in PostgreSQL and in Redis
        fronted.run_once(key, REQUEST, lambda: RESPONSE)
    fresh = itertools.count()

    def replay(store: IdempotencyStore) -> Callable[[int], None]:
        keys = itertools.cycle(done)

        def one(worker: int) -> None:
            store.run_once(next(keys), REQUEST, lambda: RESPONSE)

        return one

    def first(store: IdempotencyStore) -> Callable[[int], None]:
        def one(worker: int) -> None:
            key = IdempotencyKey("order", scope, f"fresh-{next(fresh)}")
            store.run_once(key, REQUEST, lambda: RESPONSE)

        return one

    rows = {
        "replay, database only": replay(plain),
        "replay, fast path": replay(fronted),
        "fresh key, database only": first(plain),
        "fresh key, fast path": first(fronted),
    }
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in rows}
    for _ in range(args.rounds):
        for name, one in rows.items():
            results[name].append(_measure(args.clients, args.seconds, one))
    median: dict[str, float] = {}
    for name, measured in results.items():
        ops, p50, p99 = sorted(measured)[len(measured) // 2]
        median[name] = ops
        line = f"{name:26} {args.clients} clients {ops:10.0f} ops/s"
        print(f"{line}  p50 {p50:7.0f} µs  p99 {p99:7.0f} µs")
    speedup = median["replay, fast path"] / median["replay, database only"]
    overhead = 1 - median["fresh key, fast path"] / median["fresh key, database only"]
    print(f"replay speed-up through the fast path: {speedup:.2f}x")
    print(f"fresh-key overhead of the fast path: {overhead * 100:.1f} %")
    print(f"fast path counters: {fast.metrics}")
    client.close()
    database.close()


if __name__ == "__main__":
    main()
