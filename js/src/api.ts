/**
 * mintid: unique IDs and exactly-once request rules, from the same Rust core
 * as the Python, Kotlin and Rust packages.
 *
 * The entry points (`browser.js`, `node.js`) load the wasm module before this
 * API is handed out, so every function here is synchronous.
 *
 * @packageDocumentation
 */

export { FingerprintError, KeyError, MintidError, SnowflakeError, Uuid7Error, UuidParseError } from "./errors.js";
export {
  canonicalJson,
  type FieldSelection,
  fingerprint,
  fingerprintBytes,
  fingerprintJson,
  formatFingerprint,
  parseFingerprint,
} from "./fingerprint.js";
export { IdempotencyKey } from "./key.js";
export {
  type SequencePolicy,
  Snowflake,
  SnowflakeLayout,
  type SnowflakeLayoutFields,
  type SnowflakeOptions,
  type SnowflakeParts,
  type SnowflakePreset,
} from "./snowflake.js";
export { FixedEntropy, ManualClock, type RollbackPolicy } from "./sources.js";
export {
  Uuid,
  Uuid7,
  Uuid7Generator,
  type Uuid7GeneratorOptions,
  type UuidTextForm,
  type UuidVariant,
  uuid7,
} from "./uuid.js";
