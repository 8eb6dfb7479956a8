/**
 * Browser (and default) entry: fetches and instantiates the wasm module next
 * to the glue, then hands out the API. Works from a plain
 * `<script type="module">` without a bundler.
 */

import init from "../wasm/mintid_wasm.js";

await init({ module_or_path: new URL("../wasm/mintid_wasm_bg.wasm", import.meta.url) });

export * from "./api.js";
