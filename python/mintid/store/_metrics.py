"""What the stores report to an application's metrics and traces: one hook,
:class:`StoreMetrics`, called where the core's driver has decided (names, units and
attributes: the core's registry, ``docs/spec.md``, "Metrics and traces").
"""  # noqa: D205

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, ClassVar, Final

from mintid._native import ffi

__all__ = ["StoreMetrics", "class_name", "measured", "operating", "recording"]


def _ignore(_decision: str) -> None:
    """A span's decision, where nothing records it."""


#: The span of a hook that opens none: its value takes a decision and drops it.
NO_SPAN: Final[AbstractContextManager[Callable[[str], None]]] = contextlib.nullcontext(_ignore)


class StoreMetrics:
    """The hook of :class:`~mintid.store.IdempotencyStore`, the outbox, worker
    leases, segment IDs (sync and asyncio), the fast path and the HTTP
    integrations: every method does nothing here; a recorder overrides them
    (:class:`mintid.metrics.OpenTelemetryMetrics`). Calls come from request
    threads, tasks and the renewal thread at once.

    A store's ``metrics=`` takes one; without it a store records through
    OpenTelemetry's global providers when ``opentelemetry-api`` is importable
    (no-ops until the app installs an SDK), else nothing.
    :attr:`StoreMetrics.NONE` records nothing.
    """  # noqa: D205

    #: Records nothing (``metrics=StoreMetrics.NONE`` turns the default off).
    NONE: ClassVar[StoreMetrics]

    def claimed(self, way: str, decision: str, duration_nanos: int) -> None:
        """A request's claim on ``way`` (``run_once``, ``same_transaction``,
        ``lease``) ended with ``decision`` (``execute``, ``replay``,
        ``in_progress``, ``fingerprint_mismatch``, ``key_too_old``),
        ``duration_nanos`` after its first step.
        """  # noqa: D205

    def completed(self, way: str, duration_nanos: int, response_bytes: int | None) -> None:
        """An executed request's outcome was stored in ``duration_nanos``;
        ``response_bytes`` is its response body's size, if it had one.
        """  # noqa: D205

    def store_error(self, error_class: str) -> None:
        """A statement failed with the database error class ``error_class``
        (``connection_lost``, …).
        """  # noqa: D205

    def record_lost(self) -> None:
        """A renewal found a running operation's record taken over or completed."""

    def relayed(self, sent: int, retried: int, dead: int) -> None:
        """A relay run ended: its messages ``sent``, ``retried`` and ``dead``."""

    def request_id_rejected(self, code: str) -> None:
        """A request ID was refused with the error ``code`` (``request_id.bad_tag``, …)."""

    def fast_path_lookup(self, verdict: str) -> None:
        """The fast path looked a request up: ``hit``, ``miss`` or ``fallback``."""

    def fast_path_write_failed(self) -> None:
        """A write to Redis after the database path failed."""

    def claim_span(self, way: str) -> AbstractContextManager[Callable[[str], None]]:
        """The span of a claim on ``way``; its value takes the decision."""
        return NO_SPAN

    def operation_span(self, way: str) -> AbstractContextManager[object]:
        """The span of the operation a store runs on ``way``."""
        return NO_SPAN

    def complete_span(self, way: str) -> AbstractContextManager[Callable[[str], None]]:
        """The span of storing an executed request's outcome; its value takes the decision."""
        return NO_SPAN


StoreMetrics.NONE = StoreMetrics()

_DEFAULT: list[StoreMetrics] = []


def _default() -> StoreMetrics:
    """The recorder on OpenTelemetry's global providers, or :attr:`StoreMetrics.NONE`
    when ``opentelemetry-api`` is not importable: looked up once per process.
    """  # noqa: D205
    if not _DEFAULT:
        from mintid.metrics import OpenTelemetryMetrics

        try:
            made: StoreMetrics = OpenTelemetryMetrics()
        except ModuleNotFoundError as error:
            if not (error.name or "").startswith("opentelemetry"):
                raise
            made = StoreMetrics.NONE
        _DEFAULT.append(made)
    return _DEFAULT[0]


def recording(metrics: StoreMetrics | None) -> tuple[StoreMetrics, StoreMetrics | None]:
    """A store's ``metrics=`` (``None``: the default) and what it calls,
    ``None`` when nothing records.
    """  # noqa: D205
    if metrics is None:
        metrics = _default()
    elif not isinstance(metrics, StoreMetrics):
        raise TypeError(f"metrics must be a StoreMetrics, got {type(metrics).__name__}")
    return metrics, None if metrics is StoreMetrics.NONE else metrics


def class_name(kind: ffi.DbErrorClass | ffi.Way) -> str:
    """A database error class or a way in by the core's name (``connection_lost``, ``run_once``)."""
    return kind.name.lower()


def _same(end: Any) -> Any:
    return end


#: A step nothing measures: its value hands the driver's end back unchanged.
_UNMEASURED: Final[AbstractContextManager[Callable[[Any], Any]]] = contextlib.nullcontext(_same)


class _Measured:
    """A claim, or the completion storing a response of ``body`` bytes (if any), measured:
    its span and its time, reported with the driver's decision unless the step raised.
    """  # noqa: D205

    __slots__ = ("_body", "_completion", "_decide", "_end", "_metrics", "_span", "_started", "way")

    def __init__(self, metrics: StoreMetrics, way: ffi.Way, completion: bool, body: int | None):
        self._metrics, self.way = metrics, class_name(way)
        self._completion, self._body = completion, body
        self._span = (metrics.complete_span if completion else metrics.claim_span)(self.way)
        self._end: Any = None
        self._started = 0

    def __enter__(self) -> Callable[[Any], Any]:
        self._decide = self._span.__enter__()
        self._started = time.perf_counter_ns()
        return self.end

    def end(self, end: Any) -> Any:
        """The driver handed ``end`` over (a held claim or its end, the decision first); ``end``."""
        self._end = end
        return end

    def __exit__(self, kind: Any, error: Any, trace: Any) -> bool | None:
        elapsed = time.perf_counter_ns() - self._started
        if kind is None:
            decision = str(self._end[0])
            self._decide(decision)
            if self._completion:
                self._metrics.completed(self.way, elapsed, self._body)
            else:
                self._metrics.claimed(self.way, decision, elapsed)
        return self._span.__exit__(kind, error, trace)


def measured(
    metrics: StoreMetrics | None, way: ffi.Way, completion: bool = False, body: int | None = None
) -> AbstractContextManager[Callable[[Any], Any]]:
    """A claim on ``way`` (or its completion), measured when ``metrics`` records."""
    return _UNMEASURED if metrics is None else _Measured(metrics, way, completion, body)


def operating(metrics: StoreMetrics | None, way: ffi.Way) -> AbstractContextManager[object]:
    """The span of the operation a store runs on ``way``, when ``metrics`` records."""
    return NO_SPAN if metrics is None else metrics.operation_span(class_name(way))
