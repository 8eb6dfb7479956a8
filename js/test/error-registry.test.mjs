// The JS side of the core's error-code registry: every code a host can meet
// maps to one typed error, and the TypeScript sources make no code outside it.
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { test } from "node:test";
import * as mintid from "mintid";

const registry = mintid.errorCodes().filter((entry) => entry.host);

/** JS's error class of each concern. */
const BY_CONCERN = {
  argument: mintid.ArgumentError,
  snowflake: mintid.SnowflakeError,
  uuid: mintid.UuidParseError,
  uuid7: mintid.Uuid7Error,
  key: mintid.IdempotencyKeyError,
  fingerprint: mintid.FingerprintError,
  request_id: mintid.RequestIdError,
  record: mintid.RecordError,
  lease: mintid.LeaseError,
  segment: mintid.SegmentError,
  outbox: mintid.OutboxError,
  http: mintid.HttpError,
  store: mintid.StoreError,
};

// A panic inside wasm is a trap (a RuntimeError that leaves the module
// unusable), so no JS error carries `internal.panic`.
const WASM_TRAPS = new Set(["internal"]);

test("registry: every code a host meets maps to exactly one JS error class", () => {
  assert.ok(registry.length > 90);
  const concerns = new Set(registry.map((entry) => entry.concern).filter((concern) => !WASM_TRAPS.has(concern)));
  assert.deepEqual([...concerns].sort(), Object.keys(BY_CONCERN).sort());
  assert.equal(new Set(Object.values(BY_CONCERN)).size, Object.keys(BY_CONCERN).length);
  for (const [concern, ErrorClass] of Object.entries(BY_CONCERN)) {
    assert.equal(typeof ErrorClass, "function", concern);
  }
});

test("registry: a negative number is argument.negative, as in every host", () => {
  assert.throws(() => new mintid.RecordPolicy({ leaseMillis: -1 }), (error) => {
    assert.ok(error instanceof mintid.ArgumentError && error instanceof RangeError && error instanceof mintid.MintidError);
    assert.equal(error.code, "argument.negative");
    return true;
  });
  assert.throws(() => new mintid.RecordPolicy({ leaseMillis: 2n ** 64n }), { code: "argument.out_of_range" });
});

/** A pattern a message matches when it is `template` filled (a field matches anything). */
function templatePattern(template) {
  const literal = template.split(/\{[a-z_]+\}/).map((piece) => piece.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${literal.join(".+?")}$`, "s");
}

test("registry: every code has a message template of named fields", () => {
  for (const entry of mintid.errorCodes()) {
    assert.match(entry.template, /^(?:[^{}]|\{[a-z_]+\})+$/, entry.code);
  }
});

test("registry: a message is its code's template filled", () => {
  // The same errors as in Python's and Kotlin's registry tests.
  const templates = new Map(mintid.errorCodes().map((entry) => [entry.code, entry.template]));
  const cases = [
    ["key.empty", () => new mintid.IdempotencyKey("", "s", "i")],
    ["key.invalid_text", () => mintid.IdempotencyKey.parse("nope")],
    ["fingerprint.invalid_json", () => mintid.fingerprintJson("[1,]")],
    ["argument.negative", () => new mintid.RecordPolicy({ leaseMillis: -1 })],
  ];
  for (const [code, call] of cases) {
    assert.throws(call, (error) => {
      assert.equal(error.code, code);
      assert.match(error.message, templatePattern(templates.get(code)), code);
      return true;
    });
  }
});

test("registry: the TypeScript sources make no code outside the registry", () => {
  const registered = new Set(registry.map((entry) => entry.code));
  const concerns = new Set(registry.map((entry) => entry.concern));
  // The JS layer makes an error of a code only through these two.
  const made = /(?:errorOf|new ArgumentError)\(\s*"([^"]+)"/g;
  const root = new URL("../src/", import.meta.url);
  const files = readdirSync(root, { recursive: true }).filter((name) => name.endsWith(".ts") && !name.startsWith("wasm"));
  assert.ok(files.length > 20);
  let found = 0;
  for (const name of files) {
    for (const [, code] of readFileSync(new URL(name, root), "utf8").matchAll(made)) {
      found += 1;
      assert.ok(registered.has(code), `src/${name}: ${code} is not in the core's registry`);
    }
  }
  assert.ok(found > 5, "the scan finds the codes the JS layer makes");
});

test("glossary: the JS names of docs/spec.md's table of fingerprints, grants, policies and errors exist", () => {
  const spec = readFileSync(new URL("../../docs/spec.md", import.meta.url), "utf8");
  const table = spec.split("Fingerprints, grants, policies and errors")[1].split("\n\n")[1];
  const names = [];
  for (const row of table.split("\n").slice(2)) {
    for (const [, span] of row.split("|")[4].matchAll(/`([^`]+)`/g)) {
      const name = span.replace(/^new /, "").split("(")[0].trim();
      if (/^[A-Za-z_][\w.]*$/.test(name)) names.push(name);
    }
  }
  assert.ok(names.includes("fingerprintJson"));
  for (const name of names) {
    const [first, ...rest] = name.split(".");
    // A JS global named beside a name (`RangeError`) is no export of the package.
    let owner = mintid[first] ?? globalThis[first];
    assert.ok(owner !== undefined, name);
    for (const part of rest) {
      owner = owner[part] ?? owner.prototype?.[part];
      assert.ok(owner !== undefined, name);
    }
  }
});
