/**
 * Browser entry (the `browser` condition): the small build with IDs and
 * request-ID minting. It fetches the wasm module next to it, so it works
 * from a plain `<script type="module">` without a bundler.
 */

import init from "./wasm/mintid_wasm.js";

await init({ module_or_path: new URL("./wasm/mintid_wasm_bg.wasm", import.meta.url) });

export * from "./api-browser.js";
