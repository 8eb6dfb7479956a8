"""The one async step loop: :class:`AsyncQueryRunner` runs a driver's queries on
a pooled connection (or the caller's), :func:`drive_steps` steps
the core's drivers off the wire with every answer and pause awaited, and
:func:`to_the_end` runs a completion to its end through a cancellation.
"""  # noqa: D205

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from mintid._native import ffi, native_error
from mintid.store._database import Class, Failure, _store_answer, failed, step_kind
from mintid.store._metrics import StoreMetrics
from mintid.store.aio._database import AsyncDatabase, AsyncStoreClock, LoopBindingError, Rows

T = TypeVar("T")
_NativeError = (ffi.MintidError, ffi.InternalError)


class AsyncQueryRunner:
    """Runs a driver's queries and keeps what went wrong: on a connection of
    the pool (taken at the first query, given back by :meth:`release`, closed
    when it broke or the task was cancelled mid-query) or on the caller's own.
    """  # noqa: D205

    __slots__ = ("_database", "_metrics", "_pooled", "_raw", "cause", "in_transaction")

    def __init__(
        self, database: AsyncDatabase, raw: Any = None, metrics: StoreMetrics | None = None
    ) -> None:
        """A runner over ``database``'s pool, or over the caller's ``raw``
        connection; each failed query's class goes to ``metrics``.
        """  # noqa: D205
        self._database = database
        self._metrics = metrics
        self._raw = raw
        self._pooled = raw is None
        #: The driver's exception behind the last failed answer.
        self.cause: BaseException | None = None
        #: Whether a transaction a driver began is open.
        self.in_transaction = False

    async def answer(self, query: ffi.StoreQuery) -> ffi.StoreAnswer:
        """The database's answer to ``query`` (a failure classified, never raised)."""
        params = [getattr(p, "value", None) for p in query.params]
        return _store_answer(await self.result(query.name, params))

    async def result(self, name: str, params: list[Any]) -> Rows | int | Failure:
        """The answer to the statement ``name``: rows, a count or the failure."""
        database = self._database
        return await self._answer(lambda raw: database.run(raw, name, params))

    async def begin(self, write: bool) -> int | Failure:
        """Begin a transaction (``write``: SQLite's ``BEGIN IMMEDIATE``)."""
        answer = await self.execute(self._database._begin(write))
        self.in_transaction = isinstance(answer, int)
        return answer

    async def commit(self) -> int | Failure:
        """Commit; a failed commit stays in the transaction, for the driver's rollback."""
        answer = await self.execute("COMMIT")
        self.in_transaction = not isinstance(answer, int)
        return answer

    async def rollback(self) -> int:
        """Roll back, whatever happened: ``0`` (the cause of the failure that led here is kept)."""
        cause = self.cause
        await self.execute("ROLLBACK")
        self.in_transaction, self.cause = False, cause
        return 0

    async def execute(self, sql: str) -> int | Failure:
        """Run plain ``sql`` (a migration's statement, BEGIN, …): ``0`` or the failure."""
        return await self._answer(self._control(sql))  # type: ignore[return-value]

    def _control(self, sql: str) -> Callable[[Any], Awaitable[Rows | int]]:
        database = self._database

        async def run(raw: Any) -> int:
            await database._execute(raw, sql, None, False)
            return 0

        return run

    async def _answer(self, run: Callable[[Any], Awaitable[Rows | int]]) -> Rows | int | Failure:
        database = self._database
        raw = self._raw
        if raw is None:
            try:
                raw = self._raw = await database._checkout()
            except LoopBindingError:
                raise
            except Exception as error:
                return failed(self, Class.CONNECTION_LOST, error)
        try:
            answer = await run(raw)
        except Exception as error:
            kind = database.classify(error)
            failure = failed(self, kind, error)
            if kind is Class.CONNECTION_LOST and self._pooled:
                # The server may have restarted: the idle connections are likely gone too.
                self._raw = None
                self.in_transaction = False
                await database._close_quietly(raw)
                await database.close()
            return failure
        except BaseException:
            # Cancelled mid-query: the connection's state is unknown.
            if self._pooled:
                self._raw = None
                self.in_transaction = False
                await database._close_quietly(raw)
            raise
        self.cause = None
        return answer

    async def release(self) -> None:
        """Give the pool's connection back (the caller's stays with the caller);
        a transaction still open is rolled back first.
        """  # noqa: D205
        if self.in_transaction:
            await self.rollback()
        raw = self._raw
        if raw is not None and self._pooled:
            self._raw = None
            await self._database._checkin(raw)


async def drive_steps(
    runner: AsyncQueryRunner,
    clock: AsyncStoreClock,
    first: Callable[[], Any],
    push: Callable[[ffi.StoreAnswer], Any],
    resume: Callable[[], Any],
) -> Any:
    """:func:`mintid.store._database.drive` for asyncio: a core driver's
    ``steps`` (not on the wire: leases, segment fetches) run on ``runner``,
    each answer and pause awaited, until its end. Every loop, retry and error
    code is the driver's.
    """  # noqa: D205
    try:
        step = first()
        while True:
            kind = step_kind(step)
            if kind == "RUN":
                step = push(await runner.answer(step.query))
            elif kind == "BEGIN":
                step = push(_store_answer(await runner.begin(step.write)))
            elif kind == "COMMIT":
                step = push(_store_answer(await runner.commit()))
            elif kind == "ROLLBACK":
                step = push(_store_answer(await runner.rollback()))
            elif kind == "PAUSE":
                if not runner.in_transaction:
                    await runner.release()
                await clock.pause_millis(step.millis)
                step = resume()
            else:
                return step
    except _NativeError as error:
        raise native_error(error) from runner.cause
    finally:
        await runner.release()


async def to_the_end(work: Coroutine[Any, Any, T]) -> T:
    """``work`` (a completion, a release) run to its end even if this task is
    cancelled meanwhile, the cancellation raised after it: once an operation
    has an outcome, recording it finishes even if the caller goes away
    (docs/spec.md, "Completion keeps trying"). A failure of ``work`` met by a
    cancellation is the cancellation's cause.
    """  # noqa: D205
    running = asyncio.ensure_future(work)
    cancelled: asyncio.CancelledError | None = None
    while not running.done():
        try:
            await asyncio.wait([running])  # a cancelled wait leaves ``running`` alone
        except asyncio.CancelledError as error:
            cancelled = error
    if cancelled is None:
        return running.result()
    if not running.cancelled():
        cancelled.__cause__ = running.exception()
    raise cancelled
