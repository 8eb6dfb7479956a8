/**
 * The browser build's API: UUIDv7 and UUID values, generators and text
 * forms, and minting signed request IDs from a server's grant. The full API
 * ({@link "./api.js"}, `mintid/full`) adds Snowflake IDs and what servers
 * need; Snowflake stays out of this build to keep the browser download
 * within 25 KB gzip.
 *
 * @packageDocumentation
 */

export { ArgumentError, MintidError, RequestIdError, Uuid7Error, UuidParseError } from "./errors.js";
export { Grant, type GrantFields, grantFields, inspectRequestId, mintRequestId, type SignedFields, type UnverifiedRequestId } from "./request-id.js";
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
export { coreVersion, version } from "./version.js";
