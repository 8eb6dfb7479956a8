"""The stores' metrics and spans through OpenTelemetry (``pip install mintid[otel]``).

:class:`OpenTelemetryMetrics` is a :class:`~mintid.store.StoreMetrics` that
records under the core's registry (``docs/spec.md``, "Metrics and traces"):
every instrument's name, unit and description come from the core
(``metrics()`` / ``spans()`` of the bindings), and this module only maps each
hook to its registry entry, checking at construction that it covers every
entry and nothing else. Attributes are the registry's (``way``, ``decision``,
``class``, ``code``, ``result``, ``verdict``); no span or data point carries a
key's scope or id, a fingerprint, a payload, a response or an error message.

Every store records through OpenTelemetry's global providers by default when
``opentelemetry-api`` is importable (no-ops until the app installs an SDK):
pass ``metrics=OpenTelemetryMetrics(meter_provider=…, tracer_provider=…)`` for
providers of your own, or ``metrics=StoreMetrics.NONE`` for nothing. Importing
this module imports no OpenTelemetry package; making a recorder does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Final

from mintid._native import ffi
from mintid._version import package_version
from mintid.store._metrics import StoreMetrics

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import Span, Status, TracerProvider

__all__ = ["OpenTelemetryMetrics"]

#: Each registry metric, the recorder's attribute that adds to it, and the attributes it passes.
_METRICS: Final = {
    "mintid.record.decisions": ("_decisions", ("decision", "way")),
    "mintid.record.claim.duration": ("_claim", ("way",)),
    "mintid.record.complete.duration": ("_complete", ("way",)),
    "mintid.record.response.size": ("_size", ("way",)),
    "mintid.record.lost": ("_lost", ()),
    "mintid.store.errors": ("_errors", ("class",)),
    "mintid.outbox.deliveries": ("_deliveries", ("result",)),
    "mintid.request_id.rejected": ("_rejected", ("code",)),
    "mintid.fast_path.lookups": ("_lookups", ("verdict",)),
    "mintid.fast_path.write_failures": ("_write_failures", ()),
}
_CLAIM_SPAN: Final = "mintid.claim"
_OPERATION_SPAN: Final = "mintid.operation"
_COMPLETE_SPAN: Final = "mintid.complete"
_SPANS: Final = {
    _CLAIM_SPAN: ("way", "decision"),
    _OPERATION_SPAN: ("way",),
    _COMPLETE_SPAN: ("way", "decision"),
}


def covered(metrics: Sequence[ffi.MetricInfo], spans: Sequence[ffi.SpanInfo]) -> None:
    """Check that the hooks map to exactly the registry's ``metrics`` and
    ``spans``, with their attributes; raise :class:`RuntimeError` otherwise.
    """  # noqa: D205
    mine = {**{name: names for name, (_, names) in _METRICS.items()}, **_SPANS}
    entries: list[ffi.MetricInfo | ffi.SpanInfo] = [*metrics, *spans]
    theirs = {
        entry.name: tuple(attribute.name for attribute in entry.attributes) for entry in entries
    }
    if {name: set(names) for name, names in mine.items()} != {
        name: set(names) for name, names in theirs.items()
    }:
        raise RuntimeError(f"the core's metrics and spans {theirs} are not this host's {mine}")


class _Span:
    """One open span: ``way`` from the start, ``decision`` when the step
    tells it, an error status (no message) when the step raised.
    """  # noqa: D205

    __slots__ = ("_failed", "_opened", "_span")

    def __init__(self, opened: AbstractContextManager[Span], failed: Status) -> None:
        self._opened = opened
        self._failed = failed

    def __enter__(self) -> Callable[[str], None]:
        self._span = self._opened.__enter__()
        return self._decided

    def _decided(self, decision: str) -> None:
        self._span.set_attribute("decision", decision)

    def __exit__(self, kind: Any, error: Any, trace: Any) -> bool | None:
        if kind is not None:
            self._span.set_status(self._failed)
        return self._opened.__exit__(kind, error, trace)


class OpenTelemetryMetrics(StoreMetrics):
    """The stores' metrics and spans through OpenTelemetry: instruments of
    the meter ``mintid`` and spans of the tracer ``mintid`` from the given
    providers, or from the global ones (the default of every store when
    ``opentelemetry-api`` is importable). Durations are recorded in seconds,
    sizes in bytes; Prometheus shows ``mintid_record_decisions_total`` and
    ``mintid_record_claim_duration_seconds``. Thread-safe.
    """  # noqa: D205

    # Each instrument's ``add`` or ``record``, by the registry metric it records (_METRICS).
    _decisions: Callable[..., None]
    _claim: Callable[..., None]
    _complete: Callable[..., None]
    _size: Callable[..., None]
    _lost: Callable[..., None]
    _errors: Callable[..., None]
    _deliveries: Callable[..., None]
    _rejected: Callable[..., None]
    _lookups: Callable[..., None]
    _write_failures: Callable[..., None]

    def __init__(
        self,
        *,
        meter_provider: MeterProvider | None = None,
        tracer_provider: TracerProvider | None = None,
    ) -> None:
        """Instruments and a tracer on the providers (``None``: the global ones).

        Raises :class:`ModuleNotFoundError` without ``opentelemetry-api``, and
        :class:`RuntimeError` when the core's registry names a metric or span
        this recorder does not map (or it maps one the registry lacks).
        """
        from opentelemetry import metrics, trace

        registry = list(ffi.metrics())
        covered(registry, list(ffi.spans()))
        version = package_version()
        meter = metrics.get_meter("mintid", version, meter_provider=meter_provider)
        self._tracer = trace.get_tracer("mintid", version, tracer_provider=tracer_provider)
        self._failed = trace.Status(trace.StatusCode.ERROR)
        for entry in registry:
            add: Callable[..., None]
            if entry.kind == "counter":
                add = meter.create_counter(entry.name, entry.unit, entry.description).add
            else:
                add = meter.create_histogram(
                    entry.name,
                    entry.unit,
                    entry.description,
                    explicit_bucket_boundaries_advisory=list(entry.buckets),  # the registry's
                ).record
            setattr(self, _METRICS[entry.name][0], add)

    def claimed(self, way: str, decision: str, duration_nanos: int) -> None:
        """Count the decision, record the claim's time."""
        self._decisions(1, {"decision": decision, "way": way})
        self._claim(duration_nanos / 1e9, {"way": way})

    def completed(self, way: str, duration_nanos: int, response_bytes: int | None) -> None:
        """Record the completion's time and the stored response's size."""
        attributes = {"way": way}
        self._complete(duration_nanos / 1e9, attributes)
        if response_bytes is not None:
            self._size(response_bytes, attributes)

    def store_error(self, error_class: str) -> None:
        """Count a database error by class."""
        self._errors(1, {"class": error_class})

    def record_lost(self) -> None:
        """Count a renewal that found the record lost."""
        self._lost(1)

    def relayed(self, sent: int, retried: int, dead: int) -> None:
        """Count a relay run's messages by result."""
        for result, count in (("sent", sent), ("retried", retried), ("dead", dead)):
            if count:
                self._deliveries(count, {"result": result})

    def request_id_rejected(self, code: str) -> None:
        """Count a refused request ID by its error code."""
        self._rejected(1, {"code": code})

    def fast_path_lookup(self, verdict: str) -> None:
        """Count a fast-path lookup by verdict."""
        self._lookups(1, {"verdict": verdict})

    def fast_path_write_failed(self) -> None:
        """Count a failed write to Redis."""
        self._write_failures(1)

    def _span(self, name: str, way: str) -> _Span:
        # No exception event and no status message: they would carry the error's text.
        return _Span(
            self._tracer.start_as_current_span(
                name,
                attributes={"way": way},
                record_exception=False,
                set_status_on_exception=False,
            ),
            self._failed,
        )

    def claim_span(self, way: str) -> AbstractContextManager[Callable[[str], None]]:
        """A ``mintid.claim`` span."""
        return self._span(_CLAIM_SPAN, way)

    def operation_span(self, way: str) -> AbstractContextManager[object]:
        """A ``mintid.operation`` span (the current span while the operation runs)."""
        return self._span(_OPERATION_SPAN, way)

    def complete_span(self, way: str) -> AbstractContextManager[Callable[[str], None]]:
        """A ``mintid.complete`` span."""
        return self._span(_COMPLETE_SPAN, way)
