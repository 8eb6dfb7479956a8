// Runners for tests/vectors/storable_text.json, by op. A JS string reaches the core as the
// bytes TextEncoder makes of it (the lane's text, wasm-bindgen's strings: a lone surrogate
// is EF BF BD, the WHATWG encoder's rule), then the core's rule for bytes: so each op checks
// that this crossing gives what the core's rule gives (the package initialises the module first).
import assert from "node:assert/strict";
import "mintid";
import { raisedText, storableTextFromBytes } from "../../dist/full/wasm/mintid_wasm.js";

const encoder = new TextEncoder();
const storable = (bytes, vector) => storableTextFromBytes(bytes, Number(vector.max_bytes));

export const storableTextRunners = {
  storable_text(vector, where) {
    assert.equal(storable(encoder.encode(vector.text), vector), vector.expect, where);
  },
  storable_utf8(vector, where) {
    assert.equal(storable(Buffer.from(vector.hex, "hex"), vector), vector.expect, where);
  },
  storable_utf16(vector, where) {
    // The string as JS holds it: the code units, lone surrogates included.
    const units = vector.units.match(/.{4}/g) ?? [];
    const text = String.fromCharCode(...units.map((unit) => Number.parseInt(unit, 16)));
    assert.equal(storable(encoder.encode(text), vector), vector.expect, where);
  },
  raised_text(vector, where) {
    // The type's name and message as the store sends them (an error's `name` and `message`).
    assert.equal(raisedText(encoder.encode(vector.type_name), encoder.encode(vector.message)), vector.expect, where);
  },
};
