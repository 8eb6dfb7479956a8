import * as wasm from "./wasm/mintid_wasm.js";

/**
 * This package's version; every mintid package (crates, wheel, jar, npm) has the same one.
 * `scripts/dist/version.py set` writes it, `make test-version` checks it.
 */
export const version = "0.1.0";

/** The version of the Rust core inside the wasm module. */
export function coreVersion(): string {
  return wasm.coreVersion();
}
