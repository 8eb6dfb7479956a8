"""The stores' metrics and spans as OpenTelemetry's SDK reads them: a
recorder (mintid.metrics.OpenTelemetryMetrics) on providers of its own, with
the SDK's in-memory metric reader and span exporter.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mintid._native import ffi
from mintid.metrics import OpenTelemetryMetrics

#: Every value each metric's and span's attributes may take, from the core's registry.
REGISTRY = {
    entry.name: {attribute.name: set(attribute.values) for attribute in entry.attributes}
    for entry in [*ffi.metrics(), *ffi.spans()]
}

Key = tuple[tuple[str, Any], ...]


class Recording:
    """A recorder and what it recorded."""

    def __init__(self) -> None:
        self.reader = InMemoryMetricReader()
        self.exporter = InMemorySpanExporter()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.metrics = OpenTelemetryMetrics(
            meter_provider=self.meter_provider, tracer_provider=self.tracer_provider
        )

    def _points(self) -> Iterator[tuple[str, Any]]:
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data is not None else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    for point in metric.data.data_points:
                        yield metric.name, point

    def counts(self, name: str) -> Counter[Key]:
        """A counter's values (a histogram's counts) by attributes, checked against the
        registry: every attribute is the metric's, with one of its values.
        """
        counts: Counter[Key] = Counter()
        for metric, point in self._points():
            attributes = dict(point.attributes)
            check_attributes(metric, attributes)
            if metric == name:
                value = point.count if isinstance(point, HistogramDataPoint) else point.value
                counts[tuple(sorted(attributes.items()))] += int(value)
        return +counts

    def sums(self, name: str) -> Counter[Key]:
        """A histogram's sums by attributes."""
        sums: Counter[Key] = Counter()
        for metric, point in self._points():
            if metric == name:
                assert isinstance(point, HistogramDataPoint)
                sums[tuple(sorted(dict(point.attributes or {}).items()))] += int(point.sum)
        return sums

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        """The finished spans (of ``name``), each checked against the registry."""
        finished = list(self.exporter.get_finished_spans())
        for span in finished:
            check_attributes(span.name, dict(span.attributes or {}))
            assert not span.events, "a span carries no exception event"
            assert span.status.description is None, "a span's status carries no message"
        return [span for span in finished if name is None or span.name == name]


def check_attributes(name: str, attributes: dict[str, Any]) -> None:
    """``attributes`` of the metric or span ``name`` are the registry's, with its values."""
    allowed = REGISTRY[name]
    assert set(attributes) <= set(allowed), (name, attributes)
    for attribute, value in attributes.items():
        assert value in allowed[attribute], (name, attribute, value)


def key_of(**attributes: str) -> Key:
    return tuple(sorted(attributes.items()))
