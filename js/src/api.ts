/**
 * mintid: unique IDs and exactly-once request rules, from the same Rust core
 * as the Python, Kotlin and Rust packages.
 *
 * The entry points load the wasm module before this API is handed out, so
 * every function here is synchronous.
 *
 * @packageDocumentation
 */

export * from "./api-browser.js";
export { errorCodes, type ErrorCodeInfo } from "./error-codes.js";
export {
  FingerprintError,
  HttpError,
  IdempotencyKeyError,
  KeyError,
  LeaseError,
  OutboxError,
  RecordError,
  SegmentError,
  SnowflakeError,
  StoreError,
  StoreSchemaMissingError,
} from "./errors.js";
export {
  canonicalJson,
  type FieldSelection,
  Fingerprint,
  fingerprint,
  fingerprintBytes,
  fingerprintJson,
  formatFingerprint,
  parseFingerprint,
} from "./fingerprint.js";
export {
  decodeEnvelope,
  defaultKind,
  type EnvelopeResponse,
  encodeEnvelope,
  fingerprintBody,
  fingerprintRequest,
  grantDocument,
  type HttpDefaults,
  httpDefaults,
  isJsonContentType,
  problemDocument,
  type StoredEnvelope,
  statusDocument,
} from "./http-rules.js";
export { IdempotencyKey } from "./key.js";
export {
  type Acquisition,
  acquireLease,
  LeaseGuard,
  LeasePolicy,
  type LeasePolicyOptions,
  type LeaseRelease,
  type LeaseRenewal,
  type WorkerLease,
  whenNoLeaseFound,
} from "./lease.js";
export {
  type BatchClaim,
  checkMarked,
  checkOutboxMessage,
  enqueuedFromRows,
  type OutboxStatus,
  parseOutboxStatus,
  RelayPolicy,
  type RelayPolicyOptions,
} from "./outbox.js";
export {
  applyClaim,
  type Claim,
  completeRecord,
  type Decision,
  decide,
  failRecord,
  type Fence,
  type HttpConstants,
  httpConstants,
  type IdempotencyRecord,
  type Incoming,
  isRemovable,
  parseRecordStatus,
  type ProblemDetails,
  type ProblemName,
  problemDetails,
  RecordPolicy,
  type RecordPolicyOptions,
  type RecordStatus,
  retryAfterSecs,
} from "./record.js";
export { SegmentAllocator, SegmentPolicy, type SegmentPolicyOptions } from "./segment.js";
export {
  type SequencePolicy,
  Snowflake,
  SnowflakeLayout,
  type SnowflakeLayoutFields,
  type SnowflakeOptions,
  type SnowflakeParts,
  type SnowflakePreset,
} from "./snowflake.js";
export {
  KeyRing,
  type SecretKey,
  type VerifyOptions,
  verifyRequestId,
  verifyUnsignedRequestId,
} from "./server.js";
