/**
 * Errors thrown by mintid.
 *
 * Everything the core rejects is thrown as a {@link MintidError} subclass
 * whose `code` is the core's stable dotted error code (for example
 * `"snowflake.worker_out_of_range"`), the same code that the Python, Kotlin
 * and Rust packages report. Arguments of the wrong JS type throw `TypeError`;
 * a `bigint` outside `[0, 2^64)` throws `RangeError`.
 */

/** The base class of every error the mintid core reports. */
export class MintidError extends Error {
  /** The core's stable dotted error code, identical in every language. */
  readonly code: string;

  /** An error with the core's `code` and a one-line `message`. */
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }

  override get name(): string {
    return "MintidError";
  }
}

/** Crockford base32 text that cannot be decoded (`base32.*`). */
export class Base32Error extends MintidError {
  override get name(): string {
    return "Base32Error";
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

type ErrorClass = new (code: string, message: string) => MintidError;

const CLASS_BY_CONCERN: ReadonlyMap<string, ErrorClass> = new Map<string, ErrorClass>([
  ["base32", Base32Error],
  ["uuid", UuidParseError],
  ["uuid7", Uuid7Error],
]);

/** The error class for a core error code: its concern is the part before the first dot. */
function classFor(code: string): ErrorClass {
  const concern = code.slice(0, code.indexOf("."));
  return CLASS_BY_CONCERN.get(concern) ?? MintidError;
}

/**
 * Rethrows an error raised inside the wasm module as the package's error
 * class for its code; anything else (a JS `TypeError`, a wasm trap) is
 * rethrown unchanged.
 */
export function rethrow(error: unknown): never {
  if (error instanceof Error && !(error instanceof MintidError)) {
    const code: unknown = (error as { code?: unknown }).code;
    if (typeof code === "string") {
      const ErrorOfCode = classFor(code);
      throw new ErrorOfCode(code, error.message);
    }
  }
  throw error;
}
