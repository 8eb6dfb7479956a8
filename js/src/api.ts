/**
 * mintid: unique IDs and exactly-once request rules, from the same Rust core
 * as the Python, Kotlin and Rust packages.
 *
 * The entry points (`browser.js`, `node.js`) load the wasm module before this
 * API is handed out, so every function here is synchronous.
 *
 * @packageDocumentation
 */

export { decodeBase32, encodeBase32 } from "./base32.js";
export { Base32Error, MintidError } from "./errors.js";
