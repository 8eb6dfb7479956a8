"""The Redis Cluster fast path in front of :class:`~mintid.store.IdempotencyStore`.

Before the database, one script (``EVALSHA``, one round trip) either replays a
stored response, says that a duplicate is in flight, or lets the request
through to the database claim; after the database committed a result, a
second script writes it to Redis with a time to live below the record's
retention. The database stays the truth: Redis failing, slow, failing over,
evicting or flushed sends the request down the database path. Every decision
is the core's (``mintid::store::FastPath``); this module only runs the named
scripts on the client given and pushes back what Redis said
(``docs/spec.md``, "The fast path").

The client is the application's ``redis.cluster.RedisCluster`` (or a plain
``redis.Redis``), made with a socket timeout well under the request's; this
module never imports ``redis`` itself.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from mintid import _lane_fast
from mintid._lane import Lane
from mintid._lane_fast import FastLane, RedisCall
from mintid._native import check_uint, ffi
from mintid.store._idempotency import OperationError, StoredResponse
from mintid.store._metrics import StoreMetrics

__all__ = ["AsyncRedisFastPath", "FastPathMetrics", "RedisFastPath"]


@dataclass(frozen=True)
class FastPathMetrics:
    """The fast path's counters, as read by :attr:`RedisFastPath.metrics`."""

    #: Requests answered from Redis (a replay or in progress).
    hits: int
    #: Requests that found nothing usable in Redis and went to the database.
    misses: int
    #: Requests whose check failed (error, timeout, failover) and went to the database.
    fallbacks: int
    #: Writes after the database path (settle, forget) that failed; nothing depends on them.
    write_failures: int


class _Counters:
    """The scripts loaded on a client, and the counters of what they came to."""

    def __init__(self, client: Any, ttl_millis: int | None) -> None:
        self.client = client
        self.ttl_millis = None if ttl_millis is None else check_uint("ttl_millis", ttl_millis)
        self._scripts = {
            script.name: client.register_script(script.text) for script in ffi.fast_path_scripts()
        }
        self._lock = threading.Lock()
        self._counts = {"hit": 0, "miss": 0, "fallback": 0, "write_failures": 0}

    @property
    def metrics(self) -> FastPathMetrics:
        """The counters so far."""
        with self._lock:
            counts = self._counts
            return FastPathMetrics(
                counts["hit"], counts["miss"], counts["fallback"], counts["write_failures"]
            )

    def _count(self, counter: str) -> None:
        with self._lock:
            self._counts[counter] += 1

    def _script(self, call: RedisCall) -> Any:
        """The client's call of ``call`` (``EVALSHA``, ``NOSCRIPT`` loads it again)."""
        name, keys, args = call
        return self._scripts[name](keys=keys, args=args)

    def _bind(self, lane: Lane, metrics: StoreMetrics | None) -> BoundFastPath:
        return BoundFastPath(self, FastLane(lane, self.ttl_millis), metrics)


class RedisFastPath(_Counters):
    """The fast path over ``client`` (a ``redis.cluster.RedisCluster``): pass
    it to :class:`~mintid.store.IdempotencyStore` as ``fast_path=``.

    ``ttl_millis`` caps how long an entry lives (it always ends before the
    record's retention). One instance may serve several stores; its
    counters (:attr:`metrics`) add up across them. Thread-safe when
    ``client`` is.
    """  # noqa: D205

    def __init__(self, client: Any, *, ttl_millis: int | None = None) -> None:
        """Load the core's scripts on ``client`` (``register_script``)."""
        super().__init__(client, ttl_millis)


class AsyncRedisFastPath(_Counters):
    """:class:`RedisFastPath` for asyncio, over a
    ``redis.asyncio.cluster.RedisCluster``: pass it to
    :class:`~mintid.store.aio.AsyncIdempotencyStore` as ``fast_path=``.
    """  # noqa: D205

    def __init__(self, client: Any, *, ttl_millis: int | None = None) -> None:
        """Load the core's scripts on ``client`` (``register_script``)."""
        super().__init__(client, ttl_millis)


def _failed(error: Exception) -> bytes:
    return _lane_fast.failed(str(error) or type(error).__name__)


class BoundFastPath:
    """A fast path under one store's policy (made by the store): the core's
    calls out, Redis's answers in, sync or async.
    """  # noqa: D205

    def __init__(self, fast: _Counters, core: FastLane, metrics: StoreMetrics | None) -> None:
        """Made by the fast path's ``_bind``; its store's ``metrics``."""
        self.fast = fast
        self._core = core
        self._metrics = metrics

    def _verdict(self, digest: bytes, answer: bytes) -> Any:
        """The core's verdict, counted: a replay or in-progress end (the lane's
        ``Finished`` tuple) to answer with, or ``None`` to go to the database.
        """  # noqa: D205
        verdict, end = self._core.read(digest, answer)
        self.fast._count(verdict)
        if self._metrics is not None:
            self._metrics.fast_path_lookup(verdict)
        return end

    def _write_failed(self) -> None:
        self.fast._count("write_failures")
        if self._metrics is not None:
            self._metrics.fast_path_write_failed()

    def settle(
        self,
        key_text: str,
        digest: bytes,
        held: ffi.Held | None,
        result: object,
        finished: Any,
        now_millis: int,
    ) -> RedisCall:
        """The write after the database path: the committed result, or forget.

        ``result`` is what the operation returned or raised, ``finished``
        the driver's end (``None`` when the store raised). Run it with
        :meth:`write` (or :meth:`write_async`).
        """
        if held is not None and finished == ("executed",) and isinstance(result, StoredResponse):
            settled = _lane_fast.executed(held, result.content_type, result.body)
        elif (
            held is not None
            and finished == ("operation_failed", True)
            and isinstance(result, OperationError)
        ):
            stored = result.response
            response = None if stored is None else (stored.content_type, stored.body)
            settled = _lane_fast.failed_stored(held, result.message, response)
        else:
            settled = _lane_fast.other(held)
        return self._core.settle(key_text, digest, settled, now_millis)

    def write(self, call: RedisCall | None) -> None:
        """Run a write that nothing depends on: a failure is only counted."""
        if call is None:
            return
        try:
            self.fast._script(call)
        except Exception:  # Redis down or slow: the database holds the truth
            self._write_failed()

    async def write_async(self, call: RedisCall | None) -> None:
        """:meth:`write` on an asyncio client."""
        if call is None:
            return
        try:
            await self.fast._script(call)
        except Exception:  # Redis down or slow: the database holds the truth
            self._write_failed()

    def check(
        self, key_text: str, digest: bytes, key_created_millis: int | None, now_millis: int
    ) -> Any:
        """The check before the database: the end to answer with, or ``None``."""
        call = self._core.check(key_text, digest, key_created_millis, now_millis)
        if call is None:
            return None
        try:
            answer = _lane_fast.answer(self.fast._script(call))
        except Exception as error:  # down, slow, failing over: the database path
            answer = _failed(error)
        return self._verdict(digest, answer)

    async def check_async(
        self, key_text: str, digest: bytes, key_created_millis: int | None, now_millis: int
    ) -> Any:
        """:meth:`check` on an asyncio client."""
        call = self._core.check(key_text, digest, key_created_millis, now_millis)
        if call is None:
            return None
        try:
            answer = _lane_fast.answer(await self.fast._script(call))
        except Exception as error:  # down, slow, failing over: the database path
            answer = _failed(error)
        return self._verdict(digest, answer)

    def claimed(self, key_text: str, held: ffi.Held) -> RedisCall | None:
        """The write after a claim, if any: a takeover invalidates the entry."""
        return self._core.claimed(key_text, held)
