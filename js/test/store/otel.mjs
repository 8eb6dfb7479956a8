// An OpenTelemetry SDK in memory for the metrics tests: a meter provider read by a manual
// reader, a tracer provider exporting finished spans to memory, and the stores' recorder on both.
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OpenTelemetryMetrics } from "../../dist/full/store/pg.js";

/** A reader collected by the test itself. */
class ManualReader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}

/** The data points of `resourceMetrics`, by `name{attribute=value,…}`: a counter's sum, a histogram's count, sum, unit and description. */
export function pointsOf(resourceMetrics) {
  const points = new Map();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      for (const point of metric.dataPoints) {
        const attributes = Object.entries(point.attributes).sort(([a], [b]) => a.localeCompare(b)).map(([name, value]) => `${name}=${value}`);
        const value = typeof point.value === "number" ? point.value : { count: point.value.count, sum: point.value.sum };
        points.set(`${metric.descriptor.name}{${attributes.join(",")}}`, value);
      }
    }
  }
  return points;
}

/** The sum of every counter point of metric `name` whose attributes include `where`. */
export function total(points, name, where = {}) {
  let sum = 0;
  for (const [key, value] of points) {
    const at = key.indexOf("{");
    if (key.slice(0, at) !== name) continue;
    const attributes = Object.fromEntries(key.slice(at + 1, -1).split(",").filter(Boolean).map((pair) => pair.split("=")));
    if (Object.entries(where).every(([attribute, wanted]) => attributes[attribute] === wanted)) sum += typeof value === "number" ? value : value.count;
  }
  return sum;
}

/** A recorder on an in-memory SDK: `metrics` (pass it to the stores), `points()`, `spans()`, `descriptors()`, `boundaries()` (each recorded histogram's bucket bounds). */
export function inMemoryRecorder() {
  const reader = new ManualReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const collect = async () => {
    const { resourceMetrics, errors } = await reader.collect();
    if (errors.length > 0) throw errors[0];
    return resourceMetrics;
  };
  return {
    metrics: new OpenTelemetryMetrics({ meterProvider, tracerProvider }),
    points: async () => pointsOf(await collect()),
    boundaries: async () =>
      new Map((await collect()).scopeMetrics.flatMap((scope) => scope.metrics.flatMap((metric) => metric.dataPoints.filter((point) => point.value.buckets).map((point) => [metric.descriptor.name, point.value.buckets.boundaries])))),
    descriptors: async () => (await collect()).scopeMetrics.flatMap((scope) => scope.metrics.map((metric) => metric.descriptor)),
    spans: () => exporter.getFinishedSpans(),
  };
}
