// The package reports its version and its core's: one version for every mintid package.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import * as full from "../dist/full/node.js";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

test("version: the package and its core report the package.json version", () => {
  assert.equal(full.version, pkg.version);
  assert.equal(full.coreVersion(), pkg.version);
});
