// Assembles the two builds after `tsc` and wasm-bindgen:
//   dist/full/     every module, with the full wasm module (Node, `mintid/full`)
//   dist/browser/  browser.js: the modules it reaches and the small browser
//                  build's glue, bundled and minified by esbuild into one file,
//                  beside the browser wasm module and the modules' .d.ts
// then prints the raw and gzip sizes of what a browser downloads for
// `import "mintid"` and fails when the gzip total exceeds the budget.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { buildSync } from "esbuild";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const BUDGET_GZIP_BYTES = 25 * 1024;
const GLUE = ["mintid_wasm.js", "mintid_wasm.d.ts", "mintid_wasm_bg.wasm"];
const root = fileURLToPath(new URL("../", import.meta.url));
const full = join(root, "dist/full");
const browser = join(root, "dist/browser");

/** The modules `entry` imports, transitively (relative static imports only), itself included. */
function reachable(entry) {
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(file, "utf8");
    for (const [, specifier] of source.matchAll(/(?:import|export)\s[^"']*?from\s+["'](\.[^"']+)["']|import\s+["'](\.[^"']+)["']/g)) {
      if (specifier) visit(join(dirname(file), specifier));
    }
  };
  visit(entry);
  return [...seen];
}

function copy(from, to) {
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
}

for (const name of GLUE) copy(join(root, "src/wasm", name), join(full, "wasm", name));
rmSync(browser, { recursive: true, force: true });
const browserModules = reachable(join(full, "browser.js"));
for (const file of browserModules) {
  const path = relative(full, file);
  copy(file, join(browser, path));
  const types = file.replace(/\.js$/, ".d.ts");
  if (existsSync(types)) copy(types, join(browser, path.replace(/\.js$/, ".d.ts")));
}
for (const name of GLUE) copy(join(root, "build/browser", name), join(browser, "wasm", name));
for (const name of ["browser.js", "browser.d.ts"]) rmSync(join(full, name));
const bundle = join(browser, "browser.js");
buildSync({
  entryPoints: [bundle],
  outfile: bundle,
  allowOverwrite: true,
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  legalComments: "none",
  logLevel: "warning",
});
for (const file of browserModules) {
  if (file !== join(full, "browser.js")) rmSync(join(browser, relative(full, file)));
}

function report(title, files, budget) {
  let raw = 0;
  let gzip = 0;
  for (const file of files) {
    const bytes = readFileSync(file);
    const zipped = gzipSync(bytes, { level: 9 }).length;
    raw += bytes.length;
    gzip += zipped;
    console.log(`  ${relative(root, file).padEnd(40)} ${String(bytes.length).padStart(7)} B ${String(zipped).padStart(7)} B gzip`);
  }
  console.log(`${title}: ${raw} B raw, ${gzip} B gzip${budget ? ` (budget ${budget} B gzip)` : ""}`);
  return gzip;
}

const browserFiles = [bundle, join(browser, "wasm/mintid_wasm_bg.wasm")];
const fullFiles = [...reachable(join(full, "web.js")), join(full, "wasm/mintid_wasm_bg.wasm")];
const browserGzip = report("browser download (import \"mintid\")", browserFiles, BUDGET_GZIP_BYTES);
report("full download (import \"mintid/full\")", fullFiles);
if (browserGzip > BUDGET_GZIP_BYTES) {
  console.error(`size budget exceeded: ${browserGzip} B gzip > ${BUDGET_GZIP_BYTES} B`);
  process.exitCode = 1;
}
