// Prints the raw and gzip sizes of what a browser downloads for `import "mintid"`
// and fails when the gzip total exceeds the budget.
import { readFileSync, readdirSync } from "node:fs";
import { gzipSync } from "node:zlib";

const BUDGET_GZIP_BYTES = 25 * 1024;
const root = new URL("../", import.meta.url);
const files = [
  ...readdirSync(new URL("dist/", root))
    .filter((name) => name.endsWith(".js") && name !== "node.js")
    .map((name) => `dist/${name}`),
  "wasm/mintid_wasm.js",
  "wasm/mintid_wasm_bg.wasm",
];

let raw = 0;
let gzip = 0;
for (const file of files) {
  const bytes = readFileSync(new URL(file, root));
  const zipped = gzipSync(bytes, { level: 9 }).length;
  raw += bytes.length;
  gzip += zipped;
  console.log(`${file.padEnd(28)} ${String(bytes.length).padStart(7)} B raw ${String(zipped).padStart(7)} B gzip`);
}
console.log(`${"browser download".padEnd(28)} ${String(raw).padStart(7)} B raw ${String(gzip).padStart(7)} B gzip (budget ${BUDGET_GZIP_BYTES})`);
if (gzip > BUDGET_GZIP_BYTES) {
  console.error(`size budget exceeded: ${gzip} B gzip > ${BUDGET_GZIP_BYTES} B`);
  process.exitCode = process.env.MINTID_SIZE_BUDGET === "warn" ? 0 : 1;
}
