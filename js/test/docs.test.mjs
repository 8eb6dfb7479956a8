// Every `js` block of the docs runs as written (scripts/docs/blocks.py lists the docs and
// the rules). The blocks of one section run in order as one module, in a directory inside
// the package (so that `import "mintid"` resolves to it), on a fresh PostgreSQL schema
// (DATABASE_URL). A section that shows one step of a flow gets what it names from SETUP,
// keyed by its first line. Where a block prints, `console.log(…); // text` says what:
// the output must be those texts, in order.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { test } from "node:test";
import { dialects, freshDatabase } from "./store/databases.mjs";

const ROOT = new URL("../../", import.meta.url);

const SETUP = {
  'import { randomBytes } from "node:crypto";': `
import { mintRequestId } from "mintid";
const userId = 42;
const body = { sku: "tea", qty: 2 };
const storedRecordOf = () => undefined; // a first request: no record yet
const request = { get headers() { return { "mintid-request-id": mintRequestId(grant) }; } };
`,
};

function sections() {
  const listed = JSON.parse(execFileSync("python3", [new URL("scripts/docs/blocks.py", ROOT).pathname, "--json", "js"], { encoding: "utf8" }));
  const found = new Map();
  for (const block of listed) {
    const key = `${block.doc} / ${block.section}`;
    if (!found.has(key)) found.set(key, { where: block.where, blocks: [] });
    found.get(key).blocks.push(block.text);
  }
  return [...found.values()];
}

const SECTIONS = sections();
const postgres = dialects().find((d) => d.dialect === "postgres");

test("every SETUP belongs to a section the docs still have", () => {
  const firsts = new Set(SECTIONS.map((s) => s.blocks[0].split("\n")[0]));
  for (const first of Object.keys(SETUP)) assert.ok(firsts.has(first), `SETUP for a block the docs no longer have: ${first}`);
});

for (const { where, blocks } of SECTIONS) {
  test(`${where} runs as written`, { skip: postgres.skip }, async () => {
    const db = await freshDatabase("postgres");
    const dir = mkdtempSync(new URL("./.docs-", import.meta.url).pathname);
    try {
      const code = (SETUP[blocks[0].split("\n")[0]] ?? "") + blocks.join("\n");
      writeFileSync(`${dir}/section.mjs`, code);
      const env = {
        ...process.env,
        DATABASE_URL: process.env.MINTID_PG_URL,
        PGOPTIONS: `-c search_path=${db.schema}`,
        MINTID_SECRET: Buffer.alloc(32, 7).toString("base64"),
      };
      const output = execFileSync("node", ["section.mjs"], { cwd: dir, encoding: "utf8", env });
      const expected = [...code.matchAll(/console\.log\(.*\);\s*\/\/ (.*)$/gm)].map((m) => m[1]);
      assert.deepEqual(output.trim().split("\n").filter(Boolean), expected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await db.close();
    }
  });
}
