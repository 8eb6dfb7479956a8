/**
 * Errors thrown by mintid.
 *
 * Everything the core rejects is thrown as a {@link MintidError} subclass
 * whose `code` is the core's stable dotted error code (for example
 * `"snowflake.worker_out_of_range"`), the same code that the Python, Kotlin
 * and Rust packages report. Arguments of the wrong JS type throw `TypeError`;
 * a number the core cannot hold throws {@link ArgumentError} (`argument.*`,
 * a `RangeError` too). Every code is in the core's registry (`errorCodes()`).
 */

/** Optional details of a {@link MintidError}. */
export interface ErrorDetails {
  /** The zero-based byte offset of the problem in the input. */
  readonly position?: number;
  /** The part of an idempotency key at fault. */
  readonly part?: string;
  /** The HTTP problem to answer with. */
  readonly problem?: string;
  /** The error behind this one (for a store error, the database driver's). */
  readonly cause?: unknown;
}

/** The base class of every error the mintid core reports. */
export class MintidError extends Error {
  /** The core's stable dotted error code, identical in every language. */
  readonly code: string;
  /** The zero-based byte offset of the problem in the input, when the core reports one. */
  readonly position: number | undefined;
  /** The part of an idempotency key at fault (`kind`, `scope` or `id`), when the core reports one. */
  readonly part: string | undefined;
  /** The HTTP problem to answer with (see `problemDetails`), when the core names one. */
  readonly problem: string | undefined;

  /** An error with the core's `code`, a one-line `message` and optional details. */
  constructor(code: string, message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.position = details.position;
    this.part = details.part;
    this.problem = details.problem;
  }

  override get name(): string {
    return "MintidError";
  }

  /** Instances of subclasses, and {@link ArgumentError}s (which are `RangeError`s). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // `this` is the class on the right of `instanceof` (a subclass inherits this method):
    // naming MintidError instead would make every MintidError an instance of each subclass.
    // biome-ignore lint/complexity/noThisInStatic: the receiver is the point, see above
    return Function.prototype[Symbol.hasInstance].call(this, value) || (this === MintidError && value instanceof ArgumentError);
  }
}

/**
 * A value no core type can hold (`argument.*`): `argument.negative` for a
 * negative number, `argument.out_of_range` for one beyond its field (or not
 * an integer), `argument.byte_length` for a byte string of the wrong length.
 * The same codes as in every host; it is a `RangeError` (and
 * `instanceof MintidError` holds), so callers catching `RangeError` keep working.
 */
export class ArgumentError extends RangeError {
  /** The core's stable dotted error code. */
  readonly code: string;
  /** Never set for an argument error. */
  readonly position: number | undefined = undefined;
  /** Never set for an argument error. */
  readonly part: string | undefined = undefined;
  /** Never set for an argument error. */
  readonly problem: string | undefined = undefined;

  /** An error with an `argument.*` code and a one-line message. */
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }

  override get name(): string {
    return "ArgumentError";
  }
}

/** A Snowflake layout, ID or generator error (`snowflake.*`). */
export class SnowflakeError extends MintidError {
  override get name(): string {
    return "SnowflakeError";
  }
}

/** UUID text that cannot be read (`uuid.*`). */
export class UuidParseError extends MintidError {
  override get name(): string {
    return "UuidParseError";
  }
}

/** A UUIDv7 that cannot be read, built or generated (`uuid7.*`). */
export class Uuid7Error extends MintidError {
  override get name(): string {
    return "Uuid7Error";
  }
}

/** A payload that cannot be fingerprinted, or a fingerprint text that cannot be read (`fingerprint.*`). */
export class FingerprintError extends MintidError {
  override get name(): string {
    return "FingerprintError";
  }
}

/** An invalid idempotency key, key text or `Idempotency-Key` header (`key.*`). */
export class IdempotencyKeyError extends MintidError {
  override get name(): string {
    return "IdempotencyKeyError";
  }
}

/** @deprecated Renamed {@link IdempotencyKeyError}, as in Python (and `IdempotencyKeyException` in Kotlin). */
export const KeyError = IdempotencyKeyError;
/** @deprecated Renamed {@link IdempotencyKeyError}. */
export type KeyError = IdempotencyKeyError;

/** A request ID, grant or key ring error (`request_id.*`); `problem` names the HTTP problem to answer with. */
export class RequestIdError extends MintidError {
  override get name(): string {
    return "RequestIdError";
  }
}

/** A record state machine error (`record.*`). */
export class RecordError extends MintidError {
  override get name(): string {
    return "RecordError";
  }
}

/** A worker-id lease error (`lease.*`). */
export class LeaseError extends MintidError {
  override get name(): string {
    return "LeaseError";
  }
}

/** A segment allocator error (`segment.*`). */
export class SegmentError extends MintidError {
  override get name(): string {
    return "SegmentError";
  }
}

/** An outbox error (`outbox.*`). */
export class OutboxError extends MintidError {
  override get name(): string {
    return "OutboxError";
  }
}

/** A rule of the HTTP integrations refused its input, e.g. a corrupt stored response (`http.*`). */
export class HttpError extends MintidError {
  override get name(): string {
    return "HttpError";
  }
}

/**
 * A store protocol error (`store.*`): `store.unavailable`,
 * `store.response_too_large`, `store.response_not_storable`,
 * `store.not_a_response`, `store.stale_snapshot`, `store.conflict`,
 * `store.record_lost`, `store.query_failed`, `store.unexpected_row`,
 * `store.schema_missing` ({@link StoreSchemaMissingError}). Its
 * `problem` is `storage_unavailable`; `part` names the class of the database
 * error behind it (`connection_lost`, `unique_violation`, `serialization`,
 * `constraint`, `schema_missing`, `other`) and `cause` is the driver's own error: log it, never
 * answer a request with it (it may name hosts, ports and users).
 */
export class StoreError extends MintidError {
  override get name(): string {
    return "StoreError";
  }
}

/**
 * `store.schema_missing`: a mintid table does not exist, the database was
 * never migrated. The message names the fix: `await migrate(database)` once
 * at start-up (from the store's entry point, e.g. `mintid/store/pg`), or the
 * files under `schema/` with your migration tool. An HTTP edge still answers
 * 503 and logs it.
 */
export class StoreSchemaMissingError extends StoreError {
  /** The core's message, naming this package's migrate call. */
  constructor(code: string, message: string, details: ErrorDetails = {}) {
    super(
      code,
      `${message}: call await migrate(database) once at start-up (mintid/store/pg, /mysql or /sqlite), or apply the files under schema/ with your migration tool`,
      details,
    );
  }

  override get name(): string {
    return "StoreSchemaMissingError";
  }
}

type ErrorClass = new (code: string, message: string, details?: ErrorDetails) => MintidError;

const CLASS_BY_CONCERN: ReadonlyMap<string, ErrorClass> = new Map<string, ErrorClass>([
  ["snowflake", SnowflakeError],
  ["fingerprint", FingerprintError],
  ["key", IdempotencyKeyError],
  ["request_id", RequestIdError],
  ["record", RecordError],
  ["lease", LeaseError],
  ["segment", SegmentError],
  ["outbox", OutboxError],
  ["http", HttpError],
  ["store", StoreError],
  ["uuid", UuidParseError],
  ["uuid7", Uuid7Error],
]);

/** The error class for a core error code: its concern is the part before the first dot. */
function classFor(code: string): ErrorClass {
  const concern = code.slice(0, code.indexOf("."));
  return CLASS_BY_CONCERN.get(concern) ?? MintidError;
}

/** The package's error for a core error code. */
export function errorOf(code: string, message: string, details: ErrorDetails = {}): MintidError {
  if (code.startsWith("argument.")) return new ArgumentError(code, message) as unknown as MintidError;
  if (code === "store.schema_missing") return new StoreSchemaMissingError(code, message, details);
  const ErrorOfCode = classFor(code);
  return new ErrorOfCode(code, message, details);
}

/**
 * Rethrows an error raised inside the wasm module as the package's error
 * class for its code, with `cause` (the error behind it, e.g. a database
 * driver's) when given; anything else (a JS `TypeError`, a wasm trap) is
 * rethrown unchanged.
 */
export function rethrow(error: unknown, cause?: unknown): never {
  if (error instanceof Error && !(error instanceof MintidError)) {
    const { code, position, part, problem } = error as { code?: unknown; position?: unknown; part?: unknown; problem?: unknown };
    if (typeof code === "string") {
      throw errorOf(code, error.message, {
        ...(typeof position === "number" ? { position } : {}),
        ...(typeof part === "string" ? { part } : {}),
        ...(typeof problem === "string" ? { problem } : {}),
        ...(cause === undefined ? {} : { cause }),
      });
    }
  }
  throw error;
}
