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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, cast

from mintid._native import ffi
from mintid._record import RecordPolicy
from mintid.store._idempotency import OperationError, StoredResponse

__all__ = ["AsyncRedisFastPath", "FastPathMetrics", "RedisFastPath"]

_NIL: Final = cast(Callable[[], ffi.FastAnswer], ffi.FastAnswer.NIL)
_FIELDS: Final = cast(Callable[..., ffi.FastAnswer], ffi.FastAnswer.FIELDS)
_FAILED: Final = cast(Callable[..., ffi.FastAnswer], ffi.FastAnswer.FAILED)
_EXECUTED: Final = cast(Callable[..., ffi.Settled], ffi.Settled.EXECUTED)
_FAILED_STORED: Final = cast(Callable[..., ffi.Settled], ffi.Settled.FAILED_STORED)
_OTHER: Final = cast(Callable[..., ffi.Settled], ffi.Settled.OTHER)


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

    def __init__(self, client: Any, ttl_ms: int | None) -> None:
        self.client = client
        self.ttl_ms = ttl_ms
        self._scripts = {
            script.name: client.register_script(script.text) for script in ffi.fast_path_scripts()
        }
        self._lock = threading.Lock()
        self._counts = {"hits": 0, "misses": 0, "fallbacks": 0, "write_failures": 0}

    @property
    def metrics(self) -> FastPathMetrics:
        """The counters so far."""
        with self._lock:
            return FastPathMetrics(**self._counts)

    def _count(self, counter: str) -> None:
        with self._lock:
            self._counts[counter] += 1

    def _script(self, call: ffi.RedisCall) -> Any:
        """The client's call of ``call`` (``EVALSHA``, ``NOSCRIPT`` loads it again)."""
        return self._scripts[call.script](keys=call.keys, args=call.args)

    def _bind(self, policy: RecordPolicy) -> BoundFastPath:
        return BoundFastPath(self, ffi.RecordFastPath(policy._checked, self.ttl_ms))


class RedisFastPath(_Counters):
    """The fast path over ``client`` (a ``redis.cluster.RedisCluster``): pass
    it to :class:`~mintid.store.IdempotencyStore` as ``fast_path=``.

    ``ttl_ms`` caps how long an entry lives (it always ends before the
    record's retention). One instance may serve several stores; its
    counters (:attr:`metrics`) add up across them. Thread-safe when
    ``client`` is.
    """  # noqa: D205

    def __init__(self, client: Any, *, ttl_ms: int | None = None) -> None:
        """Load the core's scripts on ``client`` (``register_script``)."""
        super().__init__(client, ttl_ms)


class AsyncRedisFastPath(_Counters):
    """:class:`RedisFastPath` for asyncio, over a
    ``redis.asyncio.cluster.RedisCluster``: pass it to
    :class:`~mintid.store.aio.AsyncIdempotencyStore` as ``fast_path=``.
    """  # noqa: D205

    def __init__(self, client: Any, *, ttl_ms: int | None = None) -> None:
        """Load the core's scripts on ``client`` (``register_script``)."""
        super().__init__(client, ttl_ms)


def _answer(reply: Any) -> ffi.FastAnswer:
    """What Redis said, for the core: nil, the fields of an array, or a failure."""
    if reply is None:
        return _NIL()
    if isinstance(reply, list):
        fields: list[bytes | None] = []
        for field in reply:
            if field is None or isinstance(field, bytes):
                fields.append(field)
            elif isinstance(field, int | str):
                fields.append(str(field).encode())
            else:
                return _FAILED(f"an element of type {type(field).__name__}")
        return _FIELDS(fields)
    return _FAILED(f"a reply of type {type(reply).__name__}")


def _failed(error: Exception) -> ffi.FastAnswer:
    return _FAILED(str(error) or type(error).__name__)


class BoundFastPath:
    """A fast path under one store's policy (made by the store): the core's
    calls out, Redis's answers in, sync or async.
    """  # noqa: D205

    def __init__(self, fast: _Counters, core: ffi.RecordFastPath) -> None:
        """Made by the fast path's ``_bind``."""
        self.fast = fast
        self._core = core

    def _verdict(self, digest: bytes, answer: ffi.FastAnswer) -> Any:
        """The core's verdict, counted: a replay or in-progress end (the lane's
        ``Finished`` tuple) to answer with, or ``None`` to go to the database.
        """  # noqa: D205
        verdict = self._core.read_check(digest, answer)
        fast = self.fast
        if isinstance(verdict, ffi.FastVerdict.REPLAY):
            fast._count("hits")
            response = verdict.response
            stored = None if response is None else (response.content_type, response.body)
            return ("replay", verdict.outcome, stored, verdict.error)
        if isinstance(verdict, ffi.FastVerdict.IN_PROGRESS):
            fast._count("hits")
            return ("in_progress", verdict.retry_after_millis)
        fast._count("misses" if isinstance(verdict, ffi.FastVerdict.MISS) else "fallbacks")
        return None

    def _settle_call(
        self,
        key_text: str,
        digest: bytes,
        held: ffi.Held | None,
        result: object,
        finished: Any,
        now_ms: int,
    ) -> ffi.RedisCall:
        settled: ffi.Settled
        if held is not None and finished == ("executed",) and isinstance(result, StoredResponse):
            response = ffi.StoredResponse(content_type=result.content_type, body=result.body)
            settled = _EXECUTED(held=held, response=response)
        elif (
            held is not None
            and finished == ("operation_failed", True)
            and isinstance(result, OperationError)
        ):
            stored = result.response
            settled = _FAILED_STORED(
                held=held,
                message=result.message,
                response=None
                if stored is None
                else ffi.StoredResponse(content_type=stored.content_type, body=stored.body),
            )
        else:
            settled = _OTHER(held=held)
        return self._core.settle(key_text, digest, settled, now_ms)

    def _write(self, call: ffi.RedisCall | None) -> None:
        """Run a write that nothing depends on: a failure is only counted."""
        if call is None:
            return
        try:
            self.fast._script(call)
        except Exception:  # Redis down or slow: the database holds the truth
            self.fast._count("write_failures")

    async def _write_async(self, call: ffi.RedisCall | None) -> None:
        if call is None:
            return
        try:
            await self.fast._script(call)
        except Exception:  # Redis down or slow: the database holds the truth
            self.fast._count("write_failures")

    def check(self, key_text: str, digest: bytes, key_created_ms: int | None, now_ms: int) -> Any:
        """The check before the database: the end to answer with, or ``None``."""
        call = self._core.check(key_text, digest, key_created_ms, now_ms)
        if call is None:
            return None
        try:
            answer = _answer(self.fast._script(call))
        except Exception as error:  # down, slow, failing over: the database path
            answer = _failed(error)
        return self._verdict(digest, answer)

    async def check_async(
        self, key_text: str, digest: bytes, key_created_ms: int | None, now_ms: int
    ) -> Any:
        """:meth:`check` on an asyncio client."""
        call = self._core.check(key_text, digest, key_created_ms, now_ms)
        if call is None:
            return None
        try:
            answer = _answer(await self.fast._script(call))
        except Exception as error:  # down, slow, failing over: the database path
            answer = _failed(error)
        return self._verdict(digest, answer)

    def claimed(self, key_text: str, held: ffi.Held) -> None:
        """After the claim: a takeover invalidates the entry."""
        self._write(self._core.claimed(key_text, held))

    async def claimed_async(self, key_text: str, held: ffi.Held) -> None:
        """:meth:`claimed` on an asyncio client."""
        await self._write_async(self._core.claimed(key_text, held))

    def settle(
        self,
        key_text: str,
        digest: bytes,
        held: ffi.Held | None,
        result: object,
        finished: Any,
        now_ms: int,
    ) -> None:
        """After the database path: write the committed result, or forget.

        ``result`` is what the operation returned or raised, ``finished``
        the driver's end (``None`` when the store raised).
        """
        self._write(self._settle_call(key_text, digest, held, result, finished, now_ms))

    async def settle_async(
        self,
        key_text: str,
        digest: bytes,
        held: ffi.Held | None,
        result: object,
        finished: Any,
        now_ms: int,
    ) -> None:
        """:meth:`settle` on an asyncio client."""
        await self._write_async(self._settle_call(key_text, digest, held, result, finished, now_ms))
