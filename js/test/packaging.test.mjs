// Packaging smoke test: `npm pack`, install the tarball into a fresh project,
// then import it from Node ESM, type-check a TypeScript consumer against its
// .d.ts, and import it in Chromium through an import map.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { openPage } from "../test-support/chromium.mjs";
import { startServer } from "../test-support/server.mjs";

const PACKAGE_DIR = fileURLToPath(new URL("../", import.meta.url));
const TSC = join(PACKAGE_DIR, "node_modules", ".bin", "tsc");
const NPM_QUIET = ["--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"];

let project;
let packedFiles;
let tarball;

function run(command, args, cwd) {
  try {
    return execFileSync(command, args, { cwd, encoding: "utf8", stdio: "pipe" });
  } catch (error) {
    throw new Error(`${command} ${args.join(" ")} failed:\n${error.stdout}${error.stderr}`);
  }
}

before(() => {
  project = mkdtempSync(join(tmpdir(), "mintid-pack-"));
  const [packed] = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", project, ...NPM_QUIET], PACKAGE_DIR));
  packedFiles = packed.files.map((file) => file.path);
  tarball = join(project, packed.filename);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  run("npm", ["install", join(project, packed.filename), ...NPM_QUIET], project);
});

after(() => rmSync(project, { recursive: true, force: true }));

test("packaging: the tarball holds the build and nothing else", () => {
  for (const file of [
    "package.json",
    "README.md",
    "dist/browser/browser.js",
    "dist/browser/browser.d.ts",
    "dist/browser/wasm/mintid_wasm_bg.wasm",
    "dist/full/node.js",
    "dist/full/node.d.ts",
    "dist/full/web.js",
    "dist/full/wasm/mintid_wasm_bg.wasm",
  ]) {
    assert.ok(packedFiles.includes(file), `${file} missing from the tarball`);
  }
  assert.deepEqual(packedFiles.filter((file) => /^(src|test|test-support|bench|scripts|node_modules)\//.test(file)), []);
});

test("packaging: publint finds nothing to fix in the tarball", () => {
  // The full registry checks (attw, a bundler, fresh consumers) are `make dist`'s.
  run(join(PACKAGE_DIR, "node_modules", ".bin", "publint"), ["run", "--strict", tarball], PACKAGE_DIR);
});

test("packaging: the installed package imports from Node ESM", () => {
  const script = `import { Snowflake, Uuid7, uuid7 } from "mintid";
    console.log(Snowflake.toBase32(9223372036854775807n), Uuid7.parse(uuid7()).version);`;
  assert.equal(run("node", ["--input-type=module", "-e", script], project).trim(), "7ZZZZZZZZZZZZ 7");
});

test("packaging: without @opentelemetry/api installed, the stores record nothing", () => {
  // The consumer installed mintid alone: its optional peers (OpenTelemetry, the drivers) are absent.
  const script = `import { RecordPolicy } from "mintid";
    import { IdempotencyStore, OpenTelemetryMetrics } from "mintid/store/pg";
    const store = new IdempotencyStore({ dialect: "postgres" }, new RecordPolicy());
    const recorder = new OpenTelemetryMetrics();
    recorder.claimed("run_once", "execute", 1000);
    await recorder.traced("mintid.claim", "run_once", async () => undefined, () => "execute");
    console.log(store.metrics instanceof OpenTelemetryMetrics, Object.keys(store.metrics).length);`;
  assert.throws(() => run("node", ["--input-type=module", "-e", 'import "@opentelemetry/api";'], project), /Cannot find (package|module)/);
  assert.equal(run("node", ["--input-type=module", "-e", script], project).trim(), "false 0");
});

test("packaging: a strict TypeScript consumer type-checks against the .d.ts", () => {
  writeFileSync(join(project, "consumer.ts"), `import { MintidError, Snowflake, uuid7 } from "mintid";
const id: bigint = new Snowflake({ worker: 1 }).nextId();
const text: string = uuid7();
const code: string = new MintidError("snowflake.example", "x").code;
export { id, text, code };
`);
  writeFileSync(join(project, "tsconfig.json"), JSON.stringify({
    compilerOptions: { strict: true, module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", noEmit: true, types: [] },
    files: ["consumer.ts"],
  }));
  run(TSC, ["-p", project], project);
});

test("packaging: a bundler-style TypeScript consumer gets the browser build's types", () => {
  writeFileSync(join(project, "browser-consumer.ts"), `import { mintRequestId, uuid7 } from "mintid";
import { Snowflake } from "mintid/full";
const id: string = mintRequestId("grant", uuid7());
const next: bigint = new Snowflake({ worker: 1 }).nextId();
export { id, next };
`);
  writeFileSync(join(project, "tsconfig.browser.json"), JSON.stringify({
    compilerOptions: {
      strict: true, module: "ESNext", moduleResolution: "bundler", customConditions: ["browser"],
      target: "ES2022", lib: ["ES2022", "DOM"], noEmit: true, types: [],
    },
    files: ["browser-consumer.ts"],
  }));
  run(TSC, ["-p", join(project, "tsconfig.browser.json")], project);
});

test("packaging: the installed package imports in Chromium through an import map", async () => {
  const page = `<!doctype html>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<script type="importmap">{ "imports": { "mintid": "/pkg/dist/browser/browser.js" } }</script>
<script type="module">
  import { Uuid7 } from "mintid";
  window.encoded = Uuid7.parse("017F22E2-79B0-7CC3-98C4-DC0C0C07398F").toString();
</script>`;
  const server = await startServer({ packageDir: join(project, "node_modules", "mintid"), page });
  const browser = await openPage(server.url);
  try {
    await browser.page.waitForFunction(() => typeof window.encoded === "string");
    assert.equal(await browser.page.evaluate(() => window.encoded), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
    assert.deepEqual(browser.problems, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
