// Runners for tests/vectors/id_buffer.json, by op: the core's ID buffer rule as the
// generators' wasm sources apply it (the package initialises the module first).
import assert from "node:assert/strict";
import "mintid";
import { idBufferBatchCap, idBufferFreshUntil, idBufferNextBatchSize } from "../../dist/full/wasm/mintid_wasm.js";

export const idBufferRunners = {
  fresh_until(vector, where) {
    assert.equal(String(idBufferFreshUntil(BigInt(vector.first_tick_start_millis), BigInt(vector.tick_millis))), vector.fresh_until_millis, where);
  },
  next_batch_size(vector, where) {
    assert.equal(String(idBufferNextBatchSize(BigInt(vector.handed_out), Number(vector.cap))), vector.size, where);
  },
  batch_cap(vector, where) {
    assert.equal(String(idBufferBatchCap(BigInt(vector.ids_per_tick))), vector.cap, where);
  },
  hand_out(vector, where) {
    // The generators' test: an ID goes out while Date.now() <= freshUntil.
    const freshUntil = Number(idBufferFreshUntil(BigInt(vector.first_tick_start_millis), BigInt(vector.tick_millis)));
    let out = 0;
    for (const now of vector.now_millis) {
      if (!(Number(now) <= freshUntil)) break;
      out += 1;
    }
    assert.equal(String(out), vector.handed_out, where);
  },
};
