// A real browser: headless Chromium loads a localhost page that imports the
// package with a plain <script type="module">, makes IDs and sends them to a
// Node server that checks them with the same package.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Snowflake } from "mintid";
import { openPage } from "../test-support/chromium.mjs";
import { startServer } from "../test-support/server.mjs";

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>mintid browser test</title>
<link rel="icon" href="data:,">
<script type="module">
  import * as mintid from "/pkg/dist/browser.js";
  window.sendIds = async (values) => {
    const ids = values.map((value) => mintid.Snowflake.toBase32(BigInt(value)));
    const response = await fetch("/api/check", { method: "POST", body: JSON.stringify({ ids }) });
    return response.json();
  };
  window.mintidReady = true;
</script>`;

let server;
let browser;

before(async () => {
  server = await startServer({
    packageDir: fileURLToPath(new URL("../", import.meta.url)),
    page: PAGE,
    api: { check: ({ ids }) => ids.map((id) => Snowflake.parseBase32(id).toString()) },
  });
  browser = await openPage(server.url);
  await browser.page.waitForFunction(() => window.mintidReady === true);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test("browser: IDs made in Chromium decode on the Node server", async () => {
  const values = ["0", "9007199254740993", "9223372036854775807"];
  const decoded = await browser.page.evaluate((v) => window.sendIds(v), values);
  assert.deepEqual(decoded, values);
  assert.deepEqual(browser.problems, []);
});
