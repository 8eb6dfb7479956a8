/**
 * The stores' metrics and spans through OpenTelemetry, under the core's
 * names, units, descriptions and attributes (`docs/spec.md`, "Metrics and
 * traces"). `@opentelemetry/api` is an optional peer dependency: without an
 * explicit `metrics` option a store records through the API's global
 * providers when the package resolves (no-ops until the application
 * registers an SDK), else nothing. The API is looked up once per process;
 * the providers are used through the few methods typed here, so this
 * package's types never name OpenTelemetry's.
 */

import { createRequire } from "node:module";
import "../node.js";
import { version } from "../version.js";
import { metricBuckets, metrics as registryMetrics, spans as registrySpans } from "../wasm/mintid_wasm.js";
import type { DbErrorClass } from "./driver.js";
import { type Decision, type FastPathVerdict, NO_METRICS, type SpanName, type StoreMetrics, type Way } from "./metrics.js";

/** Attributes of a data point or span. */
type Attributes = Readonly<Record<string, string>>;

/** What the recorder uses of an OpenTelemetry `Counter`. */
interface OtelCounter {
  add(value: number, attributes?: Attributes): void;
}

/** What the recorder uses of an OpenTelemetry `Histogram`. */
interface OtelHistogram {
  record(value: number, attributes?: Attributes): void;
}

/** The options of an instrument. */
interface InstrumentOptions {
  readonly description: string;
  readonly unit: string;
  readonly advice?: { readonly explicitBucketBoundaries: number[] };
}

/** What the recorder uses of an OpenTelemetry `Meter`. */
export interface OtelMeter {
  /** Creates a counter. */
  createCounter(name: string, options: InstrumentOptions): OtelCounter;
  /** Creates a histogram. */
  createHistogram(name: string, options: InstrumentOptions): OtelHistogram;
}

/** What the recorder uses of an OpenTelemetry `MeterProvider` (the SDK's, or `metrics.getMeterProvider()`). */
export interface OtelMeterProvider {
  /** The meter of an instrumentation scope. */
  getMeter(name: string, version?: string): OtelMeter;
}

/** What the recorder uses of an OpenTelemetry `Span`. */
export interface OtelSpan {
  /** Sets an attribute. */
  setAttribute(key: string, value: string): unknown;
  /** Sets the status (`{ code: 2 }`: error). */
  setStatus(status: { readonly code: number }): unknown;
  /** Ends the span. */
  end(): void;
}

/** What the recorder uses of an OpenTelemetry `Tracer`. */
export interface OtelTracer {
  /** Starts a span, active in the context of `fn`. */
  startActiveSpan<F extends (span: OtelSpan) => unknown>(name: string, options: { readonly attributes: Attributes }, fn: F): ReturnType<F>;
}

/** What the recorder uses of an OpenTelemetry `TracerProvider` (the SDK's, or `trace.getTracerProvider()`). */
export interface OtelTracerProvider {
  /** The tracer of an instrumentation scope. */
  getTracer(name: string, version?: string): OtelTracer;
}

/** Where an {@link OpenTelemetryMetrics} records; a provider left out is the API's global one. */
export interface OpenTelemetryOptions {
  /** The meter provider (default: the global one of `@opentelemetry/api`, if it resolves). */
  readonly meterProvider?: OtelMeterProvider;
  /** The tracer provider (default: the global one of `@opentelemetry/api`, if it resolves). */
  readonly tracerProvider?: OtelTracerProvider;
}

/** What is used of the `@opentelemetry/api` package. */
interface OtelApi {
  readonly metrics: { getMeterProvider(): OtelMeterProvider };
  readonly trace: { getTracerProvider(): OtelTracerProvider };
}

let api: OtelApi | null | undefined;

/** `@opentelemetry/api`, if it resolves from this package (looked up once). */
function otelApi(): OtelApi | null {
  if (api === undefined) {
    try {
      api = createRequire(import.meta.url)("@opentelemetry/api") as OtelApi;
    } catch {
      api = null;
    }
  }
  return api;
}

/** The instrumentation scope's name. */
const SCOPE = "mintid";
/** The status code of a span that ended with an error (`SpanStatusCode.ERROR`). */
const ERROR = 2;

/** The metrics this recorder reports, by the kind and the attribute names the registry must give each. */
const USES = {
  "mintid.fast_path.lookups": { kind: "counter", attributes: ["verdict"] },
  "mintid.fast_path.write_failures": { kind: "counter", attributes: [] },
  "mintid.outbox.deliveries": { kind: "counter", attributes: ["result"] },
  "mintid.record.claim.duration": { kind: "histogram", attributes: ["way"] },
  "mintid.record.complete.duration": { kind: "histogram", attributes: ["way"] },
  "mintid.record.decisions": { kind: "counter", attributes: ["decision", "way"] },
  "mintid.record.lost": { kind: "counter", attributes: [] },
  "mintid.record.response.size": { kind: "histogram", attributes: ["way"] },
  "mintid.request_id.rejected": { kind: "counter", attributes: ["code"] },
  "mintid.store.errors": { kind: "counter", attributes: ["class"] },
} as const;

type MetricName = keyof typeof USES;

/** The spans this recorder opens, by the attribute names the registry must give each. */
const SPANS: Readonly<Record<SpanName, readonly string[]>> = {
  "mintid.claim": ["way", "decision"],
  "mintid.complete": ["way", "decision"],
  "mintid.operation": ["way"],
};

/** One entry of the core's registry. */
interface Entry {
  readonly name: string;
  readonly kind: string;
  readonly unit: string;
  readonly description: string;
  readonly attributes: readonly string[];
}

/** The attribute names of a registry entry's `name=value|value;…`. */
function attributeNames(text: string): string[] {
  return text === "" ? [] : text.split(";").map((attribute) => attribute.split("=")[0] ?? "");
}

/** The core's metrics, checked against {@link USES} and its spans against {@link SPANS}: the same names, kinds and attributes, none missing, none more. */
function registry(): ReadonlyMap<MetricName, Entry> {
  const flat = registryMetrics();
  const entries = new Map<string, Entry>();
  for (let at = 0; at + 4 < flat.length; at += 5) {
    const [name, kind, unit, description, attributes] = flat.slice(at, at + 5) as [string, string, string, string, string];
    entries.set(name, { name, kind, unit, description, attributes: attributeNames(attributes) });
  }
  const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((item, index) => item === b[index]);
  const uses = new Map<string, { readonly kind: string; readonly attributes: readonly string[] }>(Object.entries(USES));
  const mismatched = [...new Set([...entries.keys(), ...uses.keys()])].filter((name) => {
    const entry = entries.get(name);
    const use = uses.get(name);
    return entry === undefined || use === undefined || entry.kind !== use.kind || !same(entry.attributes, use.attributes);
  });
  const flatSpans = registrySpans();
  const spans = new Map<string, readonly string[]>();
  for (let at = 0; at + 2 < flatSpans.length; at += 3) spans.set(flatSpans[at] ?? "", attributeNames(flatSpans[at + 2] ?? ""));
  const ours = new Map<string, readonly string[]>(Object.entries(SPANS));
  for (const name of new Set([...spans.keys(), ...ours.keys()])) {
    if (!same(spans.get(name) ?? [], ours.get(name) ?? [""])) mismatched.push(name);
  }
  if (mismatched.length > 0) throw new TypeError(`the core's metrics and spans differ from this recorder's at ${mismatched.join(", ")}`);
  return entries as Map<MetricName, Entry>;
}

/** The instruments of one meter. */
type Instruments = { readonly [name in MetricName]: (typeof USES)[name]["kind"] extends "counter" ? OtelCounter : OtelHistogram };

function instrumentsOf(meter: OtelMeter, entries: ReadonlyMap<MetricName, Entry>): Instruments {
  const made: Record<string, OtelCounter | OtelHistogram> = {};
  for (const { name, kind, unit, description } of entries.values()) {
    if (kind === "counter") made[name] = meter.createCounter(name, { description, unit });
    else made[name] = meter.createHistogram(name, { description, unit, advice: { explicitBucketBoundaries: Array.from(metricBuckets(name)) } });
  }
  return made as Instruments;
}

/**
 * The stores' metrics and spans in OpenTelemetry: pass it as the `metrics`
 * option of a store (the default when `@opentelemetry/api` resolves is one
 * on the global providers). Instruments are created with the core's names,
 * units and descriptions; the construction fails when the core's registry
 * names a metric or span this recorder does not report, or the other way round.
 */
export class OpenTelemetryMetrics implements StoreMetrics {
  readonly #entries = registry();
  readonly #meterProvider: (() => OtelMeterProvider) | undefined;
  readonly #tracer: OtelTracer | undefined;
  #provider: OtelMeterProvider | undefined;
  #instruments: Instruments | undefined;

  /** A recorder on `options`' providers, each left out the global one of `@opentelemetry/api` (none when it does not resolve). */
  constructor(options: OpenTelemetryOptions = {}) {
    const global = otelApi();
    const { meterProvider, tracerProvider } = options;
    if (meterProvider !== undefined && typeof meterProvider.getMeter !== "function") throw new TypeError("meterProvider must be an OpenTelemetry MeterProvider");
    if (tracerProvider !== undefined && typeof tracerProvider.getTracer !== "function") throw new TypeError("tracerProvider must be an OpenTelemetry TracerProvider");
    // The global meter provider is read again at each record: an SDK registered after the store was made is used from then on.
    this.#meterProvider = meterProvider !== undefined ? () => meterProvider : global === null ? undefined : () => global.metrics.getMeterProvider();
    // The global tracer provider is a proxy that follows the registration itself.
    this.#tracer = (tracerProvider ?? global?.trace.getTracerProvider())?.getTracer(SCOPE, version);
  }

  /** The instruments of the meter provider in use, made again when it changed. */
  #meter(): Instruments | undefined {
    const provider = this.#meterProvider?.();
    if (provider === undefined) return undefined;
    if (provider !== this.#provider || this.#instruments === undefined) {
      this.#instruments = instrumentsOf(provider.getMeter(SCOPE, version), this.#entries);
      this.#provider = provider;
    }
    return this.#instruments;
  }

  claimed(way: Way, decision: Decision, nanos: number): void {
    const meter = this.#meter();
    meter?.["mintid.record.decisions"].add(1, { decision, way });
    meter?.["mintid.record.claim.duration"].record(nanos / 1e9, { way });
  }

  completed(way: Way, nanos: number, responseBytes: number | null): void {
    const meter = this.#meter();
    meter?.["mintid.record.complete.duration"].record(nanos / 1e9, { way });
    if (responseBytes !== null) meter?.["mintid.record.response.size"].record(responseBytes, { way });
  }

  storeError(errorClass: DbErrorClass): void {
    this.#meter()?.["mintid.store.errors"].add(1, { class: errorClass });
  }

  recordLost(): void {
    this.#meter()?.["mintid.record.lost"].add(1);
  }

  relayed(sent: number, retried: number, dead: number): void {
    const deliveries = this.#meter()?.["mintid.outbox.deliveries"];
    for (const [result, count] of [
      ["sent", sent],
      ["retried", retried],
      ["dead", dead],
    ] as const) {
      if (count > 0) deliveries?.add(count, { result });
    }
  }

  requestIdRejected(code: string): void {
    this.#meter()?.["mintid.request_id.rejected"].add(1, { code });
  }

  fastPathLookup(verdict: FastPathVerdict): void {
    this.#meter()?.["mintid.fast_path.lookups"].add(1, { verdict });
  }

  fastPathWriteFailed(): void {
    this.#meter()?.["mintid.fast_path.write_failures"].add(1);
  }

  traced<T>(name: SpanName, way: Way, action: () => Promise<T>, decision: (result: T) => Decision | undefined): Promise<T> {
    if (this.#tracer === undefined) return action();
    return this.#tracer.startActiveSpan(name, { attributes: { way } }, async (span: OtelSpan) => {
      try {
        const result = await action();
        const decided = decision(result);
        if (decided !== undefined) span.setAttribute("decision", decided);
        return result;
      } catch (error) {
        // No message: an error's text may carry what a span must not.
        span.setStatus({ code: ERROR });
        throw error;
      } finally {
        span.end();
      }
    });
  }
}

let fallback: StoreMetrics | undefined;

/** The stores' default hook: an {@link OpenTelemetryMetrics} on the global providers when `@opentelemetry/api` resolves, else nothing (made once). */
export function defaultMetrics(): StoreMetrics {
  fallback ??= otelApi() === null ? NO_METRICS : new OpenTelemetryMetrics();
  return fallback;
}
