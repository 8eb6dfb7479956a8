/**
 * Full API for any ESM runtime with `fetch` (the `default` condition, and
 * `mintid/full` in browsers): fetches the full wasm module next to it.
 */

import init from "./wasm/mintid_wasm.js";

await init({ module_or_path: new URL("./wasm/mintid_wasm_bg.wasm", import.meta.url) });

export * from "./api.js";
