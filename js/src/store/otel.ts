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
import { metricBuckets, metrics as registryMetrics } from "../wasm/mintid_wasm.js";
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

/** The core's registry of metrics (`docs/spec.md`, "Metrics and traces"): name, kind, unit and description of each. */
function registry(): { readonly name: string; readonly kind: string; readonly unit: string; readonly description: string }[] {
  const flat = registryMetrics();
  return Array.from({ length: Math.floor(flat.length / 5) }, (_, n) => {
    const [name = "", kind = "", unit = "", description = ""] = flat.slice(n * 5, n * 5 + 4);
    return { name, kind, unit, description };
  });
}

/** Every metric of the registry as an instrument of `meter`, by name (histograms with the registry's buckets). */
function instrumentsOf(meter: OtelMeter): ReadonlyMap<string, OtelCounter & OtelHistogram> {
  return new Map(
    registry().map(({ name, kind, unit, description }) => {
      const made =
        kind === "counter"
          ? meter.createCounter(name, { description, unit })
          : meter.createHistogram(name, { description, unit, advice: { explicitBucketBoundaries: Array.from(metricBuckets(name)) } });
      return [name, made as OtelCounter & OtelHistogram];
    }),
  );
}

/**
 * The stores' metrics and spans in OpenTelemetry: pass it as the `metrics`
 * option of a store (the default when `@opentelemetry/api` resolves is one
 * on the global providers). Instruments are created with the core's names,
 * units, descriptions and bucket bounds (`test/metrics.test.mjs` holds
 * every metric of the registry reported).
 */
export class OpenTelemetryMetrics implements StoreMetrics {
  readonly #meterProvider: (() => OtelMeterProvider) | undefined;
  readonly #tracer: OtelTracer | undefined;
  #provider: OtelMeterProvider | undefined;
  #instruments: ReadonlyMap<string, OtelCounter & OtelHistogram> | undefined;

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

  /** The instrument `name` of the meter provider in use (the instruments made again when it changed). */
  #meter(name: string): (OtelCounter & OtelHistogram) | undefined {
    const provider = this.#meterProvider?.();
    if (provider === undefined) return undefined;
    if (provider !== this.#provider || this.#instruments === undefined) {
      this.#instruments = instrumentsOf(provider.getMeter(SCOPE, version));
      this.#provider = provider;
    }
    return this.#instruments.get(name);
  }

  claimed(way: Way, decision: Decision, nanos: number): void {
    this.#meter("mintid.record.decisions")?.add(1, { decision, way });
    this.#meter("mintid.record.claim.duration")?.record(nanos / 1e9, { way });
  }

  completed(way: Way, nanos: number, responseBytes: number | null): void {
    this.#meter("mintid.record.complete.duration")?.record(nanos / 1e9, { way });
    if (responseBytes !== null) this.#meter("mintid.record.response.size")?.record(responseBytes, { way });
  }

  storeError(errorClass: DbErrorClass): void {
    this.#meter("mintid.store.errors")?.add(1, { class: errorClass });
  }

  recordLost(): void {
    this.#meter("mintid.record.lost")?.add(1);
  }

  relayed(sent: number, retried: number, dead: number): void {
    const counts = { sent, retried, dead };
    for (const [result, count] of Object.entries(counts)) if (count > 0) this.#meter("mintid.outbox.deliveries")?.add(count, { result });
  }

  requestIdRejected(code: string): void {
    this.#meter("mintid.request_id.rejected")?.add(1, { code });
  }

  fastPathLookup(verdict: FastPathVerdict): void {
    this.#meter("mintid.fast_path.lookups")?.add(1, { verdict });
  }

  fastPathWriteFailed(): void {
    this.#meter("mintid.fast_path.write_failures")?.add(1);
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
