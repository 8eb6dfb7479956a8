"""The Redis fast path (mintid.store.fast_path) on the real Redis Cluster of
scripts/db/with-db.sh (MINTID_REDIS_CLUSTER) in front of SQLite, PostgreSQL
and MariaDB: the cases of tests/conformance/fast_path.json, and the fault
tests (a primary killed, a primary asleep) with 32 workers racing on 100 keys.
"""  # noqa: D205

from __future__ import annotations

import os
import pathlib
import random
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.retry import Retry

from mintid import IdempotencyKey, RecordPolicy, fingerprint_bytes
from mintid.store import (
    IdempotencyStore,
    OperationError,
    RecordLease,
    StoredResponse,
    StoreRequest,
)
from mintid.store.fast_path import RedisFastPath
from store.store_support import Server, case_id, cases, check_fields, unknown

TIMEOUT = 0.25


def _nodes() -> list[tuple[str, int]]:
    value = os.environ.get("MINTID_REDIS_CLUSTER")
    if not value:
        message = "MINTID_REDIS_CLUSTER is not set: run the tests through scripts/db/with-db.sh"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    nodes = []
    for node in value.split(","):
        host, port = node.rsplit(":", 1)
        nodes.append((host, int(port)))
    return nodes


def _cluster() -> RedisCluster:
    return RedisCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in _nodes()],
        socket_timeout=TIMEOUT,
        socket_connect_timeout=TIMEOUT,
        retry=Retry(NoBackoff(), 1),
    )


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisCluster]:
    client = _cluster()
    yield client
    client.close()


def _request(payload: str) -> StoreRequest:
    return StoreRequest(fingerprint_bytes(payload.encode()))


def _unreachable() -> redis.Redis:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return redis.Redis(
        port=port,
        socket_timeout=TIMEOUT,
        socket_connect_timeout=TIMEOUT,
        retry=Retry(NoBackoff(), 0),
    )


@pytest.mark.parametrize("case", cases("fast_path.json"), ids=case_id)
def test_fast_path_case(server: Server, cluster: RedisCluster, case: dict[str, Any]) -> None:
    client: Any = _unreachable() if case.get("redis") == "down" else cluster
    fast = RedisFastPath(client)
    store = IdempotencyStore(server.fresh()(), RecordPolicy(), fast_path=fast)
    store.database.migrate()
    scope = f"s{uuid.uuid4().hex[:16]}"
    lease: RecordLease | None = None
    for step in case["steps"]:
        do = step["do"]
        if do == "run":
            check_fields(step, {"key", "payload", "respond", "fail", "retryable", "text", "error", "ran"})
            ran: list[bool] = []

            def operation(step: dict[str, Any] = step, ran: list[bool] = ran) -> StoredResponse:
                ran.append(True)
                if "fail" in step:
                    raise OperationError(step["fail"], retryable=step.get("retryable", False))
                return StoredResponse("text/plain", step["respond"].encode())

            key = IdempotencyKey("order", scope, step["key"])
            try:
                result = store.run_once(key, _request(step["payload"]), operation)
                decision = result.decision
            except OperationError:
                decision, result = "operation_failed", None
            assert decision == step["expect"], step
            assert bool(ran) == step["ran"], step
            if "text" in step:
                assert result is not None and result.response is not None
                assert result.response.body == step["text"].encode()
            if "error" in step:
                assert result is not None and result.error == step["error"]
        elif do == "lease":
            check_fields(step, {"key", "payload"})
            key = IdempotencyKey("order", scope, step["key"])
            claimed = store.claim_lease(key, _request(step["payload"]))
            if isinstance(claimed, RecordLease):
                assert step["expect"] == "lease", step
                lease = claimed
            else:
                assert claimed.decision == step["expect"], step
        elif do == "complete":
            check_fields(step, {"text"})
            assert lease is not None
            lease.complete(StoredResponse("text/plain", step["text"].encode()))
        elif do == "flush":
            cluster.flushall(target_nodes=RedisCluster.PRIMARIES)
        elif do == "metrics":
            metrics = fast.metrics
            counts = {"hits": metrics.hits, "misses": metrics.misses, "fallbacks": metrics.fallbacks}
            assert counts == step["expect"], case["name"]
        else:
            raise unknown("step", do)
    store.database.close()


def _primary_ports() -> list[int]:
    ports = []
    for host, port in _nodes():
        node = redis.Redis(host=host, port=port, socket_timeout=1)
        if node.info("replication")["role"] == "master":
            ports.append(port)
        node.close()
    return ports


def _wait_healthy(nodes: int, deadline_s: float = 10.0) -> None:
    """``nodes`` nodes up, each saying the cluster is ok, three of them primaries."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        states, roles = [], []
        for host, port in _nodes():
            node = redis.Redis(host=host, port=port, socket_timeout=1)
            try:
                info = node.execute_command("CLUSTER", "INFO").decode()
                states.append("cluster_state:ok" in info)
                roles.append(node.info("replication")["role"])
            except (redis.RedisError, OSError):
                pass
            finally:
                node.close()
        if len(states) == nodes and all(states) and roles.count("master") == 3:
            return
        time.sleep(0.05)
    raise AssertionError("the Redis Cluster did not come back")


def _kill(port: int) -> None:
    """SIGKILL the primary on ``port``; :func:`_restart` starts it again."""
    node = redis.Redis(port=port, socket_timeout=1)
    pid = int(node.info("server")["process_id"])
    directory = node.config_get("dir")["dir"]
    node.close()
    os.kill(pid, signal.SIGKILL)
    _KILLED.append((port, directory))


#: The nodes killed, to start again (port, data directory).
_KILLED: list[tuple[int, str]] = []
_NODE_SCRIPT = pathlib.Path(__file__).resolve().parents[3] / "scripts" / "db" / "redis-node.sh"


def _restart() -> None:
    """Start the killed nodes again (each rejoins as a replica)."""
    while _KILLED:
        port, directory = _KILLED.pop()
        subprocess.run([str(_NODE_SCRIPT), str(port), directory], check=True)


def _sleep(port: int) -> None:
    node = redis.Redis(port=port, socket_timeout=5)
    try:
        node.execute_command("DEBUG", "SLEEP", "1.2")
    finally:
        node.close()


def _race(server: Server, cluster: RedisCluster, fault: Any) -> None:
    """32 workers race on rounds of 100 fresh keys (each worker on 20 of them)
    for about two seconds while ``fault`` strikes a primary: every key's operation runs exactly once, every
    duplicate gets the stored response or ``in_progress``, nothing is lost.
    """  # noqa: D205
    fast = RedisFastPath(cluster)
    policy = RecordPolicy(5_000)  # lease
    store = IdempotencyStore(server.fresh()(), policy, fast_path=fast)
    store.database.migrate()
    scope = f"f{uuid.uuid4().hex[:16]}"
    effects: Counter[str] = Counter()
    lock = threading.Lock()
    problems: list[str] = []
    rounds = 0
    deadline = time.monotonic() + 2.0
    struck = threading.Event()

    def operation(name: str) -> StoredResponse:
        with lock:
            effects[name] += 1
        return StoredResponse("text/plain", f"done {name}".encode())

    def worker(names: list[str], barrier: threading.Barrier) -> None:
        barrier.wait()
        for name in random.sample(names, 20):
            key = IdempotencyKey("order", scope, name)
            try:
                result = store.run_once(key, _request(name), lambda n=name: operation(n))
            except Exception as error:  # noqa: BLE001 - every failure is a finding
                problems.append(f"{name}: {error!r}")
                continue
            if result.decision == "replay":
                assert result.response is not None
                if result.response.body != f"done {name}".encode():
                    problems.append(f"{name}: replayed {result.response.body!r}")
            elif result.decision not in ("execute", "in_progress"):
                problems.append(f"{name}: {result.decision}")

    names_all: list[str] = []
    while time.monotonic() < deadline or rounds < 2:
        names = [f"r{rounds}-{i}" for i in range(100)]
        names_all += names
        barrier = threading.Barrier(32)
        threads = [threading.Thread(target=worker, args=(names, barrier)) for _ in range(32)]
        for thread in threads:
            thread.start()
        if rounds == 0 and not struck.is_set():
            struck.set()
            threading.Thread(target=fault, args=(random.choice(_primary_ports()),)).start()
        for thread in threads:
            thread.join()
        rounds += 1
    assert problems == []
    assert all(effects[name] <= 1 for name in names_all), "a side effect ran twice"
    # Nothing lost: a key nobody saw run is one whose every request was in progress;
    # its next request runs it, and every key replays its one response.
    for name in names_all:
        key = IdempotencyKey("order", scope, name)
        result = store.run_once(key, _request(name), lambda n=name: operation(n))
        assert result.decision in ("replay", "execute"), name
        assert result.response is not None and result.response.body == f"done {name}".encode()
    assert all(effects[name] == 1 for name in names_all)
    assert fast.metrics.hits > 0
    store.database.close()


def test_a_primary_killed_mid_run(server: Server, cluster: RedisCluster) -> None:
    try:
        _race(server, cluster, _kill)
    finally:
        _wait_healthy(6 - len(_KILLED))
        _restart()
        _wait_healthy(6)


def test_a_primary_asleep_mid_run(server: Server, cluster: RedisCluster) -> None:
    try:
        _race(server, cluster, _sleep)
    finally:
        _wait_healthy(6)
