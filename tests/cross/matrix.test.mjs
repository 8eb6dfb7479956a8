// The cross-language matrix: Rust (the `mintid` tool), a Rust server (axum
// behind mintid-store's IdempotencyLayer), Python, Kotlin (from one JVM) and a
// browser (headless Chromium) each issue a grant from the same key; each mints
// request IDs from every grant; each verifies every ID, a tampered copy and an
// ID presented under another scope. 5 issuers × 5 minters × 5 verifiers, every
// cell must pass. See tests/cross/README.md.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { browserParty } from "./parties/browser.mjs";
import { kotlinParty } from "./parties/kotlin.mjs";
import { lineParty } from "./parties/lines.mjs";
import { rustParty } from "./parties/rust.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HERE = fileURLToPath(new URL("./", import.meta.url));
const CLI = process.env.MINTID_CLI ?? join(ROOT, "target/release/mintid");
const PYTHON = process.env.MINTID_PYTHON ?? join(ROOT, ".venv/python-test/bin/python");
const RUST_SERVER = process.env.MINTID_RUST_SERVER ?? join(ROOT, "target/debug/examples/cross_party");

const KEY_ID = "7";
const SCOPE = "user:42";
const OTHER_SCOPE = "user:43";
const PER_GRANT = 3;
const BAD_TAG = "request_id.bad_tag";
/** What a server party answers a refusal with: the problem the core maps the code to. */
const PROBLEM_OF = { [BAD_TAG]: "invalid_request_id" };

/** `id` with its second-to-last character changed (inside the tag). */
function tamper(id) {
  const flipped = id.at(-2) === "A" ? "B" : "A";
  return id.slice(0, -2) + flipped + id.slice(-1);
}

const workDir = mkdtempSync(join(tmpdir(), "mintid-cross-"));
let parties = [];

before(async () => {
  assert.ok(existsSync(CLI), `${CLI} is missing: cargo build --release -p mintid-cli`);
  assert.ok(existsSync(PYTHON), `${PYTHON} is missing: run make test-python`);
  assert.ok(existsSync(RUST_SERVER), `${RUST_SERVER} is missing: cargo build -p mintid-store --example cross_party`);
  const started = await Promise.allSettled([
    rustParty(CLI, workDir),
    { ...lineParty("Rust server", RUST_SERVER, []), refusals: "problems" },
    lineParty("Python", PYTHON, [join(HERE, "parties/python_party.py")]),
    kotlinParty(),
    browserParty(),
  ]);
  parties = started.filter(({ status }) => status === "fulfilled").map(({ value }) => value);
  const failed = started.find(({ status }) => status === "rejected");
  if (failed) throw failed.reason;
});

after(async () => {
  await Promise.all(parties.map((party) => party.close()));
  rmSync(workDir, { recursive: true, force: true });
});

/** Sends `batch` to every party at once; resolves to their replies, in party order. */
const everyone = (batchOf) => Promise.all(parties.map((party) => party.ask(batchOf(party))));

/** The replies of a batch, each `ok`, without the `ok`. */
function oks(party, replies) {
  return replies.map((reply) => {
    assert.equal(reply[0], "ok", `${party.name}: ${reply.join(" ")}`);
    return reply.slice(1);
  });
}

test("cross-language matrix: every issuer × minter × verifier agrees", async () => {
  const secret = randomBytes(32).toString("hex");
  (await everyone(() => [["key", KEY_ID, secret]])).forEach((replies, i) => oks(parties[i], replies));

  const expires = String(Date.now() + 3_600_000);
  const grants = (await everyone(() => [["issue", SCOPE, expires]])).map((replies, i) => oks(parties[i], replies)[0][0]);

  // minted[issuer][minter]: PER_GRANT IDs.
  const mintReplies = await everyone(() => grants.map((grant) => ["mint", grant, String(PER_GRANT)]));
  const minted = grants.map((_, issuer) => parties.map((minter, m) => oks(minter, mintReplies[m])[issuer]));
  const allIds = minted.flat(2);
  assert.equal(new Set(allIds).size, allIds.length, "every minted ID is distinct");

  // Every verifier gets the same checks: each ID under its scope, a tampered
  // copy and the first ID under another scope of every issuer × minter pair.
  const checks = [];
  minted.forEach((byMinter, issuer) =>
    byMinter.forEach((ids, minter) => {
      for (const id of ids) checks.push({ issuer, minter, scope: SCOPE, id, expect: "ok" });
      checks.push({ issuer, minter, scope: SCOPE, id: tamper(ids[0]), expect: BAD_TAG });
      checks.push({ issuer, minter, scope: OTHER_SCOPE, id: ids[0], expect: BAD_TAG });
    }),
  );
  const verdicts = await everyone(() => checks.map(({ scope, id }) => ["verify", scope, id]));

  // cells[issuer][minter][verifier]: the checks that came out as expected.
  const cells = grants.map(() => parties.map(() => parties.map(() => ({ passed: 0, total: 0 }))));
  const failures = [];
  const uuids = new Map();
  checks.forEach((check, c) =>
    parties.forEach((verifier, v) => {
      const [status, value] = verdicts[v][c];
      const cell = cells[check.issuer][check.minter][v];
      cell.total += 1;
      const refusal = verifier.refusals === "problems" ? PROBLEM_OF[check.expect] : check.expect;
      const expected = check.expect === "ok" ? status === "ok" && recentUuid7(value) : status === "err" && value === refusal;
      const consistent = check.expect !== "ok" || (uuids.get(check.id) ?? value) === value;
      if (check.expect === "ok") uuids.set(check.id, value);
      if (expected && consistent) cell.passed += 1;
      else failures.push(`${parties[check.issuer].name} grant, ${parties[check.minter].name} ID ${check.id} (${check.scope}), verified by ${verifier.name}: ${status} ${value}, expected ${check.expect}`);
    }),
  );
  console.log(table(cells));
  assert.deepEqual(failures, []);
  for (const party of parties) assert.deepEqual(party.problems ?? [], [], `${party.name} console errors`);
});

/** A hyphenated UUIDv7 whose time is within a minute of now. */
function recentUuid7(text) {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(text)) return false;
  const millis = Number.parseInt(text.slice(0, 8) + text.slice(9, 13), 16);
  return Math.abs(millis - Date.now()) < 60_000;
}

/** One block per issuer: minters down, verifiers across, `passed/total` checks a cell. */
function table(cells) {
  const names = parties.map((party) => party.name);
  const width = Math.max(...names.map((name) => name.length), 7) + 2;
  const row = (first, rest) => first.padEnd(28) + rest.map((text) => text.padStart(width)).join("");
  const lines = [];
  cells.forEach((byMinter, issuer) => {
    lines.push(`grant issued by ${names[issuer]}`, row("  minted by ↓ verified by →", names));
    byMinter.forEach((byVerifier, minter) =>
      lines.push(row(`  ${names[minter]}`, byVerifier.map(({ passed, total }) => `${passed === total ? "ok" : "FAIL"} ${passed}/${total}`))),
    );
  });
  return lines.join("\n");
}
