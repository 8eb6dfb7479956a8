// Runners for tests/vectors/db_error.json, by op: the core's database error classes, as the
// pg, mysql2 and better-sqlite3 executors ask them (the package initialises the module first).
import assert from "node:assert/strict";
import "mintid";
import { classifyDbError } from "../../dist/full/wasm/mintid_wasm.js";

export const dbErrorRunners = {
  classify(vector, where) {
    assert.equal(classifyDbError(vector.dialect, vector.code, vector.sqlstate, vector.message), vector.class, where);
  },
};
