/**
 * mintid: unique IDs and exactly-once request rules, from the same Rust core
 * as the Python, Kotlin and Rust packages.
 *
 * The entry points (`browser.js`, `node.js`) load the wasm module before this
 * API is handed out, so every function here is synchronous.
 *
 * @packageDocumentation
 */

export { decodeBase32, encodeBase32 } from "./base32.js";
export { Base32Error, MintidError, Uuid7Error, UuidParseError } from "./errors.js";
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
