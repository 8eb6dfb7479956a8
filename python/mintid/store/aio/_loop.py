""":func:`to_the_end`: a completion run to its end through a cancellation."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


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
