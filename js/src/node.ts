/**
 * Node entry: reads the full wasm module from the package and instantiates
 * it synchronously (no top-level await, no flags), then hands out the API.
 */

import { readFileSync } from "node:fs";
import { initSync } from "./wasm/mintid_wasm.js";

initSync({ module: readFileSync(new URL("./wasm/mintid_wasm_bg.wasm", import.meta.url)) });

export * from "./api.js";
