"""The Redis fast path (mintid.store.fast_path) on the real Redis Cluster of
scripts/db/with-db.sh (MINTID_REDIS_CLUSTER) in front of SQLite, PostgreSQL
and MariaDB, for the sync store (redis-py's RedisCluster) and the asyncio one
(redis.asyncio's RedisCluster, driven through store.async_support's sync view):
the cases of tests/redis/fast_path.json, the core's Redis steps after
SCRIPT FLUSH (sent again by EVAL) and FLUSHALL (a replay the database served
written back), an asyncio task cancelled mid-request, a store used before fork() serving the
child, and the fault tests (a
primary killed, a primary asleep) with 32 workers racing on 100 keys.
"""

from __future__ import annotations

import asyncio
import json
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
import redis.asyncio
import redis.asyncio.cluster
import redis.asyncio.retry
import redis.cluster
from redis.backoff import NoBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

from mintid import IdempotencyKey, RecordPolicy, fingerprint_bytes
from mintid.errors import ArgumentNegativeError
from mintid.store import (
    IdempotencyStore,
    OperationError,
    RunResult,
    StoredResponse,
    StoreRequest,
)
from mintid.store.aio import AsyncIdempotencyStore
from mintid.store.fast_path import AsyncRedisFastPath, RedisFastPath
from store.async_support import LoopThread, SyncStore
from store.metrics_support import Recording, key_of
from store.store_support import (
    Server,
    case_id,
    check_fields,
    environment,
    in_forked_child,
    unknown,
)

ROOT = pathlib.Path(__file__).resolve().parents[3]
#: The fault tests' timeout: a paused or killed primary falls back to the database at once.
TIMEOUT = 0.1
#: The shared cases' timeout: they count hits, misses and fallbacks exactly, so a Redis that
#: is only slow on a loaded machine must not turn a miss into a fallback.
CASE_TIMEOUT = 2.0
#: redis-py's node class (untyped constructor).
ClusterNode: Any = redis.cluster.ClusterNode


def _nodes() -> list[tuple[str, int]]:
    nodes = []
    for node in environment("MINTID_REDIS_CLUSTER").split(","):
        host, port = node.rsplit(":", 1)
        nodes.append((host, int(port)))
    return nodes


def _cluster(timeout: float = TIMEOUT) -> RedisCluster:
    return RedisCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in _nodes()],
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
    )


@pytest.fixture(scope="module", params=["sync", "async"])
def flavor(request: pytest.FixtureRequest) -> Iterator[str]:
    yield str(request.param)


class Made:
    """A store with the fast path, of one flavor, on a case's fresh database."""

    def __init__(
        self,
        flavor: str,
        server: Server,
        policy: RecordPolicy,
        *,
        down: bool,
        timeout: float = TIMEOUT,
    ) -> None:
        database = server.fresh()()
        self.fast: RedisFastPath | AsyncRedisFastPath
        self.loop: LoopThread | None = None
        self.recording = Recording()
        self.scope = f"s{uuid.uuid4().hex[:16]}"
        metrics = self.recording.metrics
        if flavor == "sync":
            self.fast = RedisFastPath(_unreachable() if down else _cluster(timeout))
            self.store: Any = IdempotencyStore(
                database, policy, fast_path=self.fast, metrics=metrics
            )
            database.migrate()
            self._close: Any = database.close
            return
        database.close()
        loop = self.loop = LoopThread()

        async def make() -> AsyncIdempotencyStore:
            self.fast = AsyncRedisFastPath(
                _unreachable_async() if down else _cluster_async(timeout)
            )
            made = AsyncIdempotencyStore(
                server.async_factory()(), policy, fast_path=self.fast, metrics=metrics
            )
            await made.database.migrate()
            return made

        inner = loop.call(make())
        self.store = SyncStore(loop, inner)
        self._close = lambda: loop.call(inner.database.close())

    def execute(self, sql: str) -> None:
        """Run ``sql`` on the store's database, behind the store's back."""
        if self.loop is None:
            database = self.store.database
            with database.connection() as raw:
                database.execute(raw, sql)
            return
        inner = self.store.inner.database

        async def run() -> None:
            async with inner.connection() as raw:
                await inner.execute(raw, sql)

        self.loop.call(run())

    def close(self) -> None:
        self._close()
        if self.loop is None:
            self.fast.client.close()
        else:
            self.loop.call(self.fast.client.aclose())
            self.loop.stop()


def _cluster_async(timeout: float = TIMEOUT) -> redis.asyncio.cluster.RedisCluster:
    return redis.asyncio.cluster.RedisCluster(
        startup_nodes=[redis.asyncio.cluster.ClusterNode(host, port) for host, port in _nodes()],
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=redis.asyncio.retry.Retry(NoBackoff(), 0),
    )


def _unreachable_async() -> redis.asyncio.Redis:
    return redis.asyncio.Redis(
        port=_free_port(),
        socket_timeout=TIMEOUT,
        socket_connect_timeout=TIMEOUT,
        retry=redis.asyncio.retry.Retry(NoBackoff(), 0),
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _request(payload: str) -> StoreRequest:
    return StoreRequest(fingerprint_bytes(payload.encode()))


def _unreachable() -> redis.Redis:
    return redis.Redis(
        port=_free_port(),
        socket_timeout=TIMEOUT,
        socket_connect_timeout=TIMEOUT,
        retry=Retry(NoBackoff(), 0),
    )


FAST_PATH_CASES = json.loads((ROOT / "tests" / "redis" / "fast_path.json").read_text())["cases"]


@pytest.mark.parametrize("made", [RedisFastPath, AsyncRedisFastPath])
def test_a_negative_ttl_is_refused_as_in_every_host(made: Any) -> None:
    # Refused before the client is touched: Kotlin and JS give argument.negative too.
    with pytest.raises(ArgumentNegativeError) as raised:
        made(None, ttl_millis=-1)
    assert raised.value.code == "argument.negative"


def test_a_client_that_decodes_responses_is_refused() -> None:
    # Its replies could not carry the binary fingerprints: every request would
    # fall back to the database without a word.
    for made, client in [
        (RedisFastPath, redis.Redis(port=_free_port(), decode_responses=True)),
        (AsyncRedisFastPath, redis.asyncio.Redis(port=_free_port(), decode_responses=True)),
    ]:
        with pytest.raises(ValueError, match="decode_responses=True"):
            made(client)
    assert RedisFastPath(redis.Redis(port=_free_port())).client is not None


@pytest.mark.parametrize("case", FAST_PATH_CASES, ids=case_id)
def test_fast_path_case(server: Server, flavor: str, case: dict[str, Any]) -> None:
    made = Made(
        flavor, server, RecordPolicy(), down=case.get("redis") == "down", timeout=CASE_TIMEOUT
    )
    store, fast = made.store, made.fast
    scope = f"s{uuid.uuid4().hex[:16]}"
    lease: Any = None
    for step in case["steps"]:
        do = step["do"]
        if do == "run":
            check_fields(
                step, {"key", "payload", "respond", "fail", "retryable", "text", "error", "ran"}
            )
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
            if not isinstance(claimed, RunResult):
                assert step["expect"] == "lease", step
                lease = claimed
            else:
                assert claimed.decision == step["expect"], step
        elif do == "complete":
            check_fields(step, {"text"})
            assert lease is not None
            lease.complete(StoredResponse("text/plain", step["text"].encode()))
        elif do == "flush":
            _on_primaries("FLUSHALL")
        elif do == "flush_scripts":
            _on_primaries("SCRIPT", "FLUSH")
        elif do == "metrics":
            metrics = fast.metrics
            counts = {
                "hits": metrics.hits,
                "misses": metrics.misses,
                "fallbacks": metrics.fallbacks,
            }
            assert counts == step["expect"], case["name"]
            # The same lookups through the store's metrics, by the core's verdict names.
            lookups = made.recording.counts("mintid.fast_path.lookups")
            verdicts = {"hits": "hit", "misses": "miss", "fallbacks": "fallback"}
            assert {
                counter: lookups[key_of(verdict=verdict)] for counter, verdict in verdicts.items()
            } == step["expect"], case["name"]
        else:
            raise unknown("step", do)
    made.close()


def _primary_ports() -> list[int]:
    ports = []
    for host, port in _nodes():
        node = redis.Redis(host=host, port=port, socket_timeout=1)
        if node.info("replication")["role"] == "master":
            ports.append(port)
        node.close()
    return ports


def _wait_healthy(nodes: int, deadline_s: float = 10.0) -> None:
    """``nodes`` nodes up, each saying the cluster is ok, three of them primaries,
    every replica in sync with its primary (only a synced replica can take over).
    """
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        states, roles = [], []
        for host, port in _nodes():
            node = redis.Redis(host=host, port=port, socket_timeout=1)
            try:
                info = node.cluster("INFO")
                replication = node.info("replication")
                synced = replication.get("master_link_status", "up") == "up"
                states.append(info["cluster_state"] == "ok" and synced)
                roles.append(replication["role"])
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
    directory = str(node.config_get("dir")["dir"])
    node.close()
    os.kill(pid, signal.SIGKILL)
    _KILLED.append((port, directory))


#: The nodes killed, to start again (port, data directory).
_KILLED: list[tuple[int, str]] = []
_NODE_SCRIPT = ROOT / "scripts" / "db" / "redis-node.sh"


def _restart() -> None:
    """Start the killed nodes again (each rejoins as a replica)."""
    while _KILLED:
        port, directory = _KILLED.pop()
        subprocess.run([str(_NODE_SCRIPT), str(port), directory], check=True)


def _sleep(port: int) -> None:
    node = redis.Redis(port=port, socket_timeout=5)
    try:
        command: Any = node.execute_command
        command("DEBUG", "SLEEP", "1.2")
    finally:
        node.close()


def _race(server: Server, flavor: str, fault: Any) -> None:
    """32 workers race on rounds of 100 fresh keys (each worker on 20 of them)
    for about two seconds while ``fault`` strikes a primary: every key's
    operation runs exactly once, every duplicate gets the stored response or
    ``in_progress``, nothing is lost.
    """
    _wait_healthy(6)
    made = Made(flavor, server, RecordPolicy(2_000), down=False)  # a 2 s lease
    store, fast = made.store, made.fast
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
            except Exception as error:
                problems.append(f"{name}: {error!r}")
                continue
            if result.decision == "replay":
                assert result.response is not None
                if result.response.body != f"done {name}".encode():
                    problems.append(f"{name}: replayed {result.response.body!r}")
            elif result.decision not in ("execute", "in_progress"):
                problems.append(f"{name}: {result.decision}")

    names_all: list[str] = []
    while time.monotonic() < deadline:
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
    # its next request runs it, and every key replays its one response. A claiming
    # marker whose forget or settle was lost to the fault answers in progress until
    # its lease-long life ends (docs/spec.md, "The fast path").
    give_up = time.monotonic() + 4.0
    for name in names_all:
        key = IdempotencyKey("order", scope, name)
        result = store.run_once(key, _request(name), lambda n=name: operation(n))
        while result.decision == "in_progress" and time.monotonic() < give_up:
            time.sleep(0.1)
            result = store.run_once(key, _request(name), lambda n=name: operation(n))
        assert result.decision in ("replay", "execute"), name
        assert result.response is not None and result.response.body == f"done {name}".encode()
    assert all(effects[name] == 1 for name in names_all)
    assert fast.metrics.hits > 0
    made.close()


@pytest.fixture
def postgres(server: Server) -> Server:
    """The fault tests run on PostgreSQL only, to stay within the suite's budget:
    what they test is Redis's failure, and the database's part is the same
    driver on every dialect (the cases above run on all three).
    """
    if server.dialect != "postgres":
        pytest.skip("the fault tests run on PostgreSQL")
    return server


def test_a_primary_killed_mid_run(postgres: Server, flavor: str) -> None:
    try:
        _race(postgres, flavor, _kill)
    finally:
        try:
            # The killed primary's replica takes over before the node comes back (as a
            # replica then); the node comes back even if that failover did not happen.
            _wait_healthy(6 - len(_KILLED), deadline_s=30.0)
        finally:
            _restart()
        _wait_healthy(6, deadline_s=30.0)


def test_a_primary_asleep_mid_run(postgres: Server, flavor: str) -> None:
    try:
        _race(postgres, flavor, _sleep)
    finally:
        _wait_healthy(6, deadline_s=30.0)


def _on_primaries(*command: str) -> list[Any]:
    """Run ``command`` on every primary; the answers."""
    answers = []
    for port in _primary_ports():
        node = redis.Redis(port=port, socket_timeout=1)
        try:
            run: Any = node.execute_command  # untyped in redis-py
            answers.append(run(*command))
        finally:
            node.close()
    return answers


def _noscript_errors() -> int:
    """How many ``NOSCRIPT`` errors the primaries answered so far (their ``errorstats``)."""
    total = 0
    for answer in _on_primaries("INFO", "errorstats"):
        total += int(answer.get("errorstat_NOSCRIPT", {"count": 0})["count"])
    return total


def _run(made: Made, key: str, payload: str, respond: str, *, fail: bool = False) -> Any:
    """``run_once`` of a key of its own scope: the decision and whether the operation ran."""
    ran: list[bool] = []

    def operation() -> StoredResponse:
        ran.append(True)
        if fail:
            raise OperationError("later", retryable=True)
        return StoredResponse("text/plain", respond.encode())

    idempotency_key = IdempotencyKey("order", made.scope, key)
    try:
        result = made.store.run_once(idempotency_key, _request(payload), operation)
    except OperationError:
        return "operation_failed", bool(ran), None
    body = None if result.response is None else result.response.body.decode()
    return result.decision, bool(ran), body


def _counted(made: Made) -> dict[str, int]:
    """The fast path's counters, checked to be the store's metrics too."""
    metrics = made.fast.metrics
    counts = {
        "hits": metrics.hits,
        "misses": metrics.misses,
        "fallbacks": metrics.fallbacks,
        "write_failures": metrics.write_failures,
    }
    lookups = made.recording.counts("mintid.fast_path.lookups")
    failed = made.recording.counts("mintid.fast_path.write_failures")
    assert counts == {
        "hits": lookups[key_of(verdict="hit")],
        "misses": lookups[key_of(verdict="miss")],
        "fallbacks": lookups[key_of(verdict="fallback")],
        "write_failures": failed[key_of()],
    }
    return counts


def _made(server: Server, flavor: str, policy: RecordPolicy | None = None) -> Made:
    return Made(flavor, server, policy or RecordPolicy(), down=False, timeout=CASE_TIMEOUT)


def test_after_script_flush_every_script_is_sent_again_by_eval(server: Server, flavor: str) -> None:
    # Each request meets primaries without the scripts: the check, the settle
    # and the forget (a released key's marker) each answered NOSCRIPT, and the
    # core sent each again by EVAL: nothing fell back, no write failed.
    made = _made(server, flavor)
    before = _noscript_errors()
    _on_primaries("SCRIPT", "FLUSH")
    assert _run(made, "k1", "p1", "r1") == ("execute", True, "r1")
    _on_primaries("SCRIPT", "FLUSH")
    assert _run(made, "k1", "p1", "other") == ("replay", False, "r1")
    _on_primaries("SCRIPT", "FLUSH")
    assert _run(made, "k2", "p2", "", fail=True) == ("operation_failed", True, None)
    _on_primaries("SCRIPT", "FLUSH")
    assert _run(made, "k2", "p2", "r2") == ("execute", True, "r2")
    assert _run(made, "k2", "p2", "other") == ("replay", False, "r2")
    # Check and settle, check, check and forget, check and settle: all after a flush.
    assert _noscript_errors() - before >= 7
    assert _counted(made) == {"hits": 2, "misses": 3, "fallbacks": 0, "write_failures": 0}
    made.close()


def test_after_flushall_the_replay_the_database_served_is_written_back(
    server: Server, flavor: str
) -> None:
    made = _made(server, flavor)
    assert _run(made, "k1", "p1", "r1") == ("execute", True, "r1")
    _on_primaries("FLUSHALL")
    assert _run(made, "k1", "p1", "other") == ("replay", False, "r1")  # a miss: the database
    assert _counted(made) == {"hits": 0, "misses": 2, "fallbacks": 0, "write_failures": 0}
    # Without the database's record, only Redis can replay it: the replay was written back.
    made.execute("DELETE FROM idempotency_record")
    assert _run(made, "k1", "p1", "other") == ("replay", False, "r1")
    assert _counted(made) == {"hits": 1, "misses": 2, "fallbacks": 0, "write_failures": 0}
    made.close()


def test_a_task_cancelled_mid_operation_leaves_nothing_half_done(server: Server) -> None:
    made = _made(server, "async", RecordPolicy(1_000))  # a 1 s lease
    assert made.loop is not None
    store: AsyncIdempotencyStore = made.store.inner
    key = IdempotencyKey("order", made.scope, "k1")
    effects: list[str] = []

    async def scenario() -> None:
        started = asyncio.Event()

        async def slow() -> StoredResponse:
            started.set()
            await asyncio.sleep(30)
            effects.append("slow")
            return StoredResponse("text/plain", b"slow")

        async def once() -> StoredResponse:
            effects.append("once")
            return StoredResponse("text/plain", b"r1")

        task = asyncio.get_running_loop().create_task(store.run_once(key, _request("p1"), slow))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert effects == []
        # A retry after the lease at the latest runs it, once.
        give_up = time.monotonic() + 5.0
        result = await store.run_once(key, _request("p1"), once)
        while result.decision == "in_progress" and time.monotonic() < give_up:
            await asyncio.sleep(0.1)
            result = await store.run_once(key, _request("p1"), once)
        assert result.decision == "execute"
        assert effects == ["once"]
        again = await store.run_once(key, _request("p1"), once)
        assert again.decision == "replay" and again.response is not None
        assert again.response.body == b"r1"
        assert effects == ["once"]

    made.loop.call(scenario())
    counts = _counted(made)
    assert counts["hits"] >= 1 and counts["fallbacks"] == 0 and counts["write_failures"] == 0
    made.close()


def test_a_store_used_before_fork_serves_the_child_and_the_parent_after_it(
    server: Server,
) -> None:
    # redis-py opens new connections in a fork child and the store its own
    # database connections: the child's requests go through Redis and the
    # database as the parent's do, and each key still runs once.
    made = _made(server, "sync")
    assert _run(made, "k1", "p1", "r1") == ("execute", True, "r1")

    def in_child() -> Any:
        return _run(made, "k1", "p1", "other"), _run(made, "k2", "p2", "r2"), _counted(made)

    replay, fresh, counted = in_forked_child(in_child)
    assert replay == ("replay", False, "r1")
    assert fresh == ("execute", True, "r2")
    assert counted == {"hits": 1, "misses": 2, "fallbacks": 0, "write_failures": 0}
    # The child's result is in Redis for the parent: a hit, without running again.
    assert _run(made, "k2", "p2", "other") == ("replay", False, "r2")
    assert _counted(made) == {"hits": 1, "misses": 1, "fallbacks": 0, "write_failures": 0}
    made.close()
