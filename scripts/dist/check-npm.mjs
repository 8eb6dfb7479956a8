// Checks the npm tarball of `make dist` (mk/dist.mk) the way the registry and its users would:
//
//   node scripts/dist/check-npm.mjs dist/npm/mintid-VERSION.tgz
//
// 1. publint (package.json and exports against the files in the tarball) and
//    @arethetypeswrong/cli (types resolve for every subpath under node16 ESM and bundler).
// 2. The tarball installed into a fresh consumer project (target/dist/npm-consumer), then
//    - plain Node ESM imports `mintid` and `mintid/full`;
//    - a browser page with no bundler (an import map) loads it in Debian's Chromium;
//    - esbuild bundles a browser app from it, the output stays within the 25 KB gzip
//      budget (bundle + wasm module) and runs in Chromium.
// The tools (publint, attw, esbuild, playwright-core) are js/'s pinned dev dependencies.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "../../js/node_modules/esbuild/lib/main.js";
import { openPage } from "../../js/test-support/chromium.mjs";
import { startServer } from "../../js/test-support/server.mjs";

const BUDGET_GZIP_BYTES = 25 * 1024;
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(ROOT, "js/node_modules/.bin");
const NPM_QUIET = ["--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"];

const tarball = resolve(process.argv[2] ?? "");
const { version } = JSON.parse(readFileSync(join(ROOT, "js/package.json"), "utf8"));
assert.equal(basename(tarball), `mintid-${version}.tgz`, `usage: check-npm.mjs dist/npm/mintid-${version}.tgz`);

function run(command, args, cwd = ROOT) {
  try {
    return execFileSync(command, args, { cwd, encoding: "utf8", stdio: "pipe" });
  } catch (error) {
    throw new Error(`${command} ${args.join(" ")} failed:\n${error.stdout}${error.stderr}`);
  }
}

function gzipSize(file) {
  return gzipSync(readFileSync(file), { level: 9 }).length;
}

/** Serves `dir` under /pkg/ beside `page`, opens it in Chromium, returns what `window.result` became. */
async function inChromium(dir, page) {
  const server = await startServer({ packageDir: dir, page });
  const browser = await openPage(server.url);
  try {
    await browser.page.waitForFunction(() => window.result !== undefined, undefined, { timeout: 30_000 });
    assert.deepEqual(browser.problems, []);
    return await browser.page.evaluate(() => window.result);
  } finally {
    await browser.close();
    await server.close();
  }
}

console.log(`== ${basename(tarball)}`);
console.log(run(join(BIN, "publint"), ["run", "--strict", tarball]).trim());
// ESM only: node10 and CommonJS `require` are not supported (package.json "type": "module",
// no "require" condition), so attw's esm-only profile checks node16 (ESM) and bundler.
console.log(run(join(BIN, "attw"), [tarball, "--profile", "esm-only", "--format", "table-flipped", "--no-color"]).trim());

const consumer = join(ROOT, "target/dist/npm-consumer");
rmSync(consumer, { recursive: true, force: true });
mkdirSync(consumer, { recursive: true });
writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
run("npm", ["install", tarball, ...NPM_QUIET], consumer);

console.log("== Node ESM");
const nodeScript = `import { coreVersion, uuid7, version } from "mintid";
import { Snowflake } from "mintid/full";
const id = new Snowflake({ worker: 3 }).nextId();
console.log(JSON.stringify({ version, core: coreVersion(), uuid: uuid7().length, worker: Number((id >> 12n) & 1023n) }));`;
const node = JSON.parse(run("node", ["--input-type=module", "-e", nodeScript], consumer));
assert.deepEqual(node, { version, core: version, uuid: 36, worker: 3 });
console.log(`   mintid ${node.version} (core ${node.core}) from node_modules`);

console.log("== a browser page without a bundler (import map), Chromium");
const mapPage = `<!doctype html>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<script type="importmap">{ "imports": { "mintid": "/pkg/node_modules/mintid/dist/browser/browser.js" } }</script>
<script type="module">
  import { coreVersion, uuid7, Uuid7, version } from "mintid";
  window.result = { version, core: coreVersion(), uuidVersion: Uuid7.parse(uuid7()).version };
</script>`;
const mapped = await inChromium(consumer, mapPage);
assert.deepEqual(mapped, { version, core: version, uuidVersion: 7 });
console.log(`   ${JSON.stringify(mapped)}`);

console.log("== esbuild bundle for the browser, Chromium");
writeFileSync(join(consumer, "app.js"), `import { coreVersion, mintRequestId, uuid7, version } from "mintid";
window.result = { version, core: coreVersion(), uuid: uuid7().length, mint: typeof mintRequestId };
`);
const out = join(consumer, "out");
await build({
  absWorkingDir: consumer,
  entryPoints: ["app.js"],
  outfile: join(out, "app.js"),
  bundle: true,
  minify: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  logLevel: "warning",
});
// esbuild leaves `new URL("./wasm/…", import.meta.url)` alone: the app ships the module beside it.
mkdirSync(join(out, "wasm"), { recursive: true });
const wasm = join(consumer, "node_modules/mintid/dist/browser/wasm/mintid_wasm_bg.wasm");
copyFileSync(wasm, join(out, "wasm/mintid_wasm_bg.wasm"));
const bundleGzip = gzipSize(join(out, "app.js"));
const wasmGzip = gzipSize(wasm);
console.log(`   out/app.js ${readFileSync(join(out, "app.js")).length} B (${bundleGzip} B gzip) + wasm ${readFileSync(wasm).length} B (${wasmGzip} B gzip) = ${bundleGzip + wasmGzip} B gzip (budget ${BUDGET_GZIP_BYTES} B)`);
assert.ok(bundleGzip + wasmGzip <= BUDGET_GZIP_BYTES, `the bundled browser app exceeds ${BUDGET_GZIP_BYTES} B gzip`);
const bundled = await inChromium(consumer, `<!doctype html>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<script type="module" src="/pkg/out/app.js"></script>`);
assert.deepEqual(bundled, { version, core: version, uuid: 36, mint: "function" });
console.log(`   ${JSON.stringify(bundled)}`);
console.log("npm artifacts: ok");
