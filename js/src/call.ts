/** Calls into wasm, turning the core's errors into the package's classes. */

import { rethrow } from "./errors.js";

/** The result of `action`, or its error rethrown as a {@link MintidError} subclass. */
export function call<T>(action: () => T): T {
  try {
    return action();
  } catch (error) {
    rethrow(error);
  }
}
