/**
 * The core's registry of error codes: every code any mintid package reports,
 * with its HTTP problem (when the code is the client's fault) and a summary.
 */

import * as wasm from "./wasm/mintid_wasm.js";

/** One entry of the core's error-code registry. */
export interface ErrorCodeInfo {
  /** The stable dotted code, e.g. `request_id.bad_tag`. */
  readonly code: string;
  /** The part before the dot, e.g. `request_id`. */
  readonly concern: string;
  /** The name of the HTTP problem a request failing this way answers with, if any. */
  readonly problem: string | undefined;
  /** Whether a host can meet this code (the `base64url.*` codes stay in Rust). */
  readonly host: boolean;
  /** What the code means, in one sentence. */
  readonly summary: string;
  /** The message of an error of this code, a named field in braces for each value it fills in. */
  readonly template: string;
}

/** Every code of the core's registry, sorted by code. */
export function errorCodes(): ErrorCodeInfo[] {
  const flat = wasm.errorCodes();
  const codes: ErrorCodeInfo[] = [];
  for (let i = 0; i + 4 < flat.length; i += 5) {
    const code = flat[i] ?? "";
    const problem = flat[i + 1] ?? "";
    codes.push({
      code,
      concern: code.slice(0, code.indexOf(".")),
      problem: problem === "" ? undefined : problem,
      host: flat[i + 2] === "1",
      summary: flat[i + 3] ?? "",
      template: flat[i + 4] ?? "",
    });
  }
  return codes;
}
