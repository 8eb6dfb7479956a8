/**
 * The browser build's API: IDs (UUIDv7, Snowflake), their values and text
 * forms, and minting signed request IDs from a server's grant. The full API
 * ({@link "./api.js"}) adds what servers need.
 *
 * @packageDocumentation
 */

export { MintidError, RequestIdError, SnowflakeError, Uuid7Error, UuidParseError } from "./errors.js";
export { type GrantFields, grantFields, inspectRequestId, mintRequestId, type SignedFields, type UnverifiedRequestId } from "./request-id.js";
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
