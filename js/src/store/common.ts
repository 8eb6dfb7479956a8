/** What every `mintid/store/*` entry point exports besides its driver adapter. */

export { type StoreClock, systemClock } from "./clock.js";
export { type Connection, type Database, migrate, pendingMigrations, type Result, type Row, type SqlValue } from "./database.js";
export { DbError, type DbErrorClass, type Dialect, type Statement, type StatementKind, type StoreLimit, storeLimits } from "./driver.js";
export { StoreError, StoreSchemaMissingError } from "./errors.js";
export { type FastPathClient, type FastPathMetrics, type FastPathOptions, RedisFastPath } from "./fast-path.js";
export {
  type HeldLease,
  IdempotencyStore,
  type IdempotencyStoreOptions,
  type LeaseResult,
  MAX_RESPONSE_BYTES,
  type NotExecuted,
  OperationError,
  type RecordLease,
  type RunOnceOptions,
  type RunResult,
  type StoredRecord,
  type StoredResponse,
  type StoreRequest,
} from "./idempotency.js";
export { LeasedSnowflake, type WorkerLeaseRow, WorkerLeases } from "./lease.js";
export { type ClaimedMessage, Outbox, type OutboxMessage, type OutboxOptions, type RelayReport, type StoredMessage } from "./outbox.js";
export { SegmentIds } from "./segment.js";
export type { Decision, FastPathVerdict, SpanName, StoreMetrics, Way } from "./metrics.js";
export {
  type OpenTelemetryOptions,
  OpenTelemetryMetrics,
  type OtelMeter,
  type OtelMeterProvider,
  type OtelSpan,
  type OtelTracer,
  type OtelTracerProvider,
} from "./otel.js";
