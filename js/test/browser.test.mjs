// A real browser: headless Chromium loads a localhost page that imports the
// package's browser build with a plain <script type="module">, gets a grant
// from a Node server, mints signed request IDs offline and sends them back;
// the server verifies them with the same package. A tampered ID, or one sent
// under another user's scope, is rejected. The page also makes Snowflake IDs
// with the full build (\`mintid/full\`), which the server decodes.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { KeyRing, MintidError, Snowflake, Uuid7 } from "mintid";
import { openPage } from "../test-support/chromium.mjs";
import { startServer } from "../test-support/server.mjs";

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>mintid browser test</title>
<link rel="icon" href="data:,">
<script type="module">
  import { mintRequestId, uuid7 } from "/pkg/dist/browser/browser.js";
  // Snowflake is not in the browser build; \`mintid/full\` brings it to browsers.
  import { Snowflake } from "/pkg/dist/full/web.js";
  const post = async (path, body) => (await fetch(path, { method: "POST", body: JSON.stringify(body) })).json();
  window.checkout = async () => {
    const { grant } = await post("/api/grant", {});
    const first = mintRequestId(grant);
    const retry = first;
    const second = mintRequestId(grant);
    const flipped = first.at(-2) === "A" ? "B" : "A";
    const tampered = first.slice(0, -2) + flipped + first.slice(-1);
    const verdicts = [];
    for (const requestId of [first, retry, second, tampered]) verdicts.push(await post("/api/verify", { requestId, scope: "user:42" }));
    verdicts.push(await post("/api/verify", { requestId: first, scope: "user:43" }));
    const snowflake = new Snowflake({ worker: 3 });
    const ids = [snowflake.nextIdString(), snowflake.nextIdString()];
    return { verdicts, ids, decoded: await post("/api/decode", { ids }), uuid: uuid7() };
  };
  window.mintidReady = true;
</script>`;

const ring = new KeyRing({ id: 1, secret: randomBytes(32) });

function verify({ requestId, scope }) {
  try {
    return { ok: true, uuid: ring.verify(requestId, scope) };
  } catch (error) {
    if (!(error instanceof MintidError)) throw error;
    return { ok: false, code: error.code, problem: error.problem };
  }
}

let server;
let browser;

before(async () => {
  server = await startServer({
    packageDir: fileURLToPath(new URL("../", import.meta.url)),
    page: PAGE,
    api: {
      grant: () => ({ grant: ring.issueGrant("user:42", Date.now() + 3_600_000) }),
      verify,
      decode: ({ ids }) => ids.map((id) => String(new Snowflake({ worker: 0 }).decode(BigInt(id)).worker)),
    },
  });
  browser = await openPage(server.url);
  await browser.page.waitForFunction(() => window.mintidReady === true);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test("browser: request IDs minted in Chromium verify on the Node server; forged ones do not", async () => {
  const { verdicts, ids, decoded, uuid } = await browser.page.evaluate(() => window.checkout());
  const [first, retry, second, tampered, otherUser] = verdicts;
  assert.equal(first.ok, true, JSON.stringify(first));
  assert.deepEqual(retry, first, "a retry carries the same ID and verifies to the same UUID");
  assert.equal(second.ok, true);
  assert.ok(second.uuid > first.uuid, "a second ID has a later UUIDv7");
  assert.ok(Math.abs(Uuid7.parse(first.uuid).unixMillis - Date.now()) < 60_000);
  assert.deepEqual(tampered, { ok: false, code: "request_id.bad_tag", problem: "invalid_request_id" });
  assert.deepEqual(otherUser, { ok: false, code: "request_id.bad_tag", problem: "invalid_request_id" });
  assert.ok(BigInt(ids[1]) > BigInt(ids[0]), "Snowflake IDs cross as decimal strings, in order");
  assert.deepEqual(decoded, ["3", "3"]);
  assert.equal(Uuid7.parse(uuid).version, 7);
  assert.deepEqual(browser.problems, []);
});

test("browser: js/README.md's page runs as written: the grant, then the order with its signed ID in Mintid-Request-Id", async () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const page = readme.match(/<!-- run by: js\/test\/browser\.test\.mjs -->\n```html\n([\s\S]*?)```/)[1];
  let order;
  const ordered = new Promise((resolve) => {
    order = resolve;
  });
  const readmeServer = await startServer({
    packageDir: fileURLToPath(new URL("../", import.meta.url)),
    page,
    api: {
      grant: () => ({ grant: ring.issueGrant("user:42", Date.now() + 3_600_000) }),
      orders: (body, request) => {
        order({ body, verified: verify({ requestId: request.headers["mintid-request-id"], scope: "user:42" }) });
        return { order: 1 };
      },
    },
  });
  const readmePage = await openPage(readmeServer.url);
  try {
    const { body, verified } = await ordered;
    assert.deepEqual(body, { sku: "x", n: 2 });
    assert.equal(verified.ok, true, JSON.stringify(verified));
    assert.deepEqual(readmePage.problems, []);
  } finally {
    await readmePage.close();
    await readmeServer.close();
  }
});
