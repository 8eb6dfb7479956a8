"""The Redis Cluster fast path in front of :class:`~mintid.store.IdempotencyStore`
(``docs/spec.md``, "The fast path"): a replay or an "in progress" answered from Redis,
the database still the truth. Its Redis steps are the core's record driver's; the
store's step loop sends them on the application's ``redis.cluster.RedisCluster`` (or
``redis.Redis``, made with a socket timeout well under the request's), and this
module counts what the core reports. It never imports ``redis``.
"""  # noqa: D205

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from mintid._native import check_uint
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
    """A client for the core's Redis steps, and the counters of what they came to."""

    def __init__(self, client: Any, *, ttl_millis: int | None = None) -> None:
        """The fast path over ``client``; nothing is sent until a request.

        Raises ``ValueError`` for a client made with ``decode_responses=True``.
        """
        self.ttl_millis = None if ttl_millis is None else check_uint("ttl_millis", ttl_millis)
        encoder = getattr(client, "get_encoder", None)
        if encoder is not None and encoder().decode_responses:
            # Every reply would fail to decode (the fingerprints are binary) and
            # every request would fall back to the database, silently.
            raise ValueError(
                "the fast path's client must answer bytes: make it without decode_responses=True"
            )
        self.client = client
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

    def _count(self, lookup: str | None, write_failures: int) -> None:
        with self._lock:
            if lookup is not None:
                self._counts[lookup] += 1
            self._counts["write_failures"] += write_failures


class RedisFastPath(_Counters):
    """The fast path over ``client`` (a ``redis.cluster.RedisCluster``): pass
    it to :class:`~mintid.store.IdempotencyStore` as ``fast_path=``.

    ``ttl_millis`` caps how long an entry lives (it always ends before the
    record's retention). One instance may serve several stores; its
    counters (:attr:`metrics`) add up across them. Thread-safe when
    ``client`` is.
    """  # noqa: D205


class AsyncRedisFastPath(_Counters):
    """:class:`RedisFastPath` for asyncio, over a
    ``redis.asyncio.cluster.RedisCluster``: pass it to
    :class:`~mintid.store.aio.AsyncIdempotencyStore` as ``fast_path=``.
    """  # noqa: D205


class BoundFastPath:
    """A fast path as one store's wire runs it: the client its Redis steps go
    to, and each report of the core counted in the fast path's counters and
    the store's metrics.
    """  # noqa: D205

    __slots__ = ("_fast", "_metrics", "client", "ttl_millis")

    def __init__(self, fast: _Counters, metrics: StoreMetrics | None) -> None:
        """``fast`` under a store reporting to ``metrics``."""
        self._fast = fast
        self._metrics = metrics
        self.client = fast.client
        self.ttl_millis = fast.ttl_millis

    def reported(self, lookup: str | None, write_failures: int) -> None:
        """Count a report: the check's verdict (if one was answered) and the failed writes."""
        if lookup is None and not write_failures:
            return
        self._fast._count(lookup, write_failures)
        metrics = self._metrics
        if metrics is not None:
            if lookup is not None:
                metrics.fast_path_lookup(lookup)
            for _ in range(write_failures):
                metrics.fast_path_write_failed()


def bound(
    fast_path: _Counters | None, made: type[_Counters], metrics: StoreMetrics | None
) -> BoundFastPath | None:
    """A store's ``fast_path=`` (checked to be a ``made``) under its ``metrics``, if given."""
    if fast_path is None:
        return None
    if not isinstance(fast_path, made):
        raise TypeError(f"fast_path must be a {made.__name__}, got {type(fast_path).__name__}")
    return BoundFastPath(fast_path, metrics)
