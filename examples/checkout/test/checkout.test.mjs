// The checkout demo in a real browser: headless Chromium (Debian's, driven by
// playwright-core) loads the shop from the Python server, double-clicks
// "Place order" while the server drops the response of the request that
// placed the order, resends the same request, then sends a tampered ID and an
// ID minted from another user's grant. Exactly one order exists; every
// duplicate was a replay; the forged IDs got 400 problem+json.
// On SQLite, and on PostgreSQL when MINTID_PG_URL is set (make test sets it).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { openPage } from "../../../js/test-support/chromium.mjs";

const SERVER = fileURLToPath(new URL("../server.py", import.meta.url));
const PYTHON = process.env.MINTID_DEMO_PYTHON ?? "python3";
const PROBLEM = "application/problem+json";

/** Starts server.py on a free port; resolves with its URL and a stopper. */
function startShop(env) {
  const child = spawn(PYTHON, [SERVER, "--port", "0", "--fresh", "--test-hooks"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let errors = "";
  child.stderr.on("data", (chunk) => {
    errors += chunk;
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", resolve);
      child.kill("SIGTERM");
    });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const url = /http:\/\/127\.0\.0\.1:\d+\//.exec(out)?.[0];
      if (url) resolve({ url, stop, log: () => errors });
    });
    child.once("exit", (code) => reject(new Error(`server.py exited ${code}: ${errors}`)));
  });
}

async function waitForResponses(page, n) {
  await page.waitForFunction((count) => window.demo.responses.length >= count, n, { timeout: 10_000 });
  return page.evaluate(() => window.demo.responses.map((entry) => ({ ...entry })));
}

async function checkout(env) {
  const shop = await startShop(env);
  let browser;
  try {
    browser = await openPage(`${shop.url}?user=alice`);
    const { page, problems } = browser;
    await page.waitForFunction(() => window.demo?.ready === true);

    // A double click while the response of the request that placed the order is lost.
    await page.evaluate(() => {
      window.demo.dropNext = true;
    });
    await page.dblclick("#place");
    const clicked = await waitForResponses(page, 2);
    assert.equal(clicked[0].requestId, clicked[1].requestId, "both clicks carry the one ID minted for the order");
    const lost = clicked.filter((entry) => entry.kind === "lost");
    const replayed = clicked.filter((entry) => entry.status === 201 && entry.replayed);
    assert.equal(lost.length, 1, `one response was dropped: ${JSON.stringify(clicked)}`);
    assert.equal(replayed.length, 1, `the other click was a replay: ${JSON.stringify(clicked)}`);
    const order = JSON.parse(replayed[0].body);
    assert.equal(order.user, "alice");

    // Retry the request whose response was lost: the same answer, replayed.
    await page.click("#resend");
    const [, , resent] = await waitForResponses(page, 3);
    assert.equal(resent.status, 201);
    assert.equal(resent.replayed, true);
    assert.equal(resent.body, replayed[0].body, "a replay is byte for byte the stored response");

    // A tampered ID, and an ID minted from bob's grant sent as alice: 400 problem+json.
    await page.click("#tamper");
    const bob = await fetch(`${shop.url}api/grant`, { method: "POST", headers: { cookie: "user=bob" } });
    const { grant } = await bob.json();
    await page.evaluate((other) => window.demo.sendWithId(window.demo.mint(other)), grant);
    const [, , , tampered, foreign] = await waitForResponses(page, 5);
    for (const refused of [tampered, foreign]) {
      assert.equal(refused.status, 400, JSON.stringify(refused));
      assert.equal(refused.contentType, PROBLEM);
      const problem = JSON.parse(refused.body);
      assert.equal(problem.status, 400);
      assert.match(problem.type, /invalid-request-id$/);
    }

    // Exactly one order was placed, whatever arrived.
    const listing = await (await fetch(`${shop.url}api/orders`, { headers: { cookie: "user=alice" } })).json();
    assert.equal(listing.count, 1, JSON.stringify(listing));
    assert.equal(listing.orders[0].order, order.order);
    assert.equal(await page.evaluate(() => document.getElementById("count").textContent), "1");
    // Chromium logs the dropped response and the 400s; nothing else may fail.
    const unexpected = problems.filter((text) => !text.startsWith("Failed to load resource"));
    assert.deepEqual(unexpected, [], "the page raised no errors");
  } catch (error) {
    error.message += `\nserver log:\n${shop.log()}`;
    throw error;
  } finally {
    await browser?.close();
    await shop.stop();
  }
}

test("checkout on SQLite: one order, duplicates replayed, forged IDs refused", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mintid-checkout-"));
  try {
    await checkout({ MINTID_DEMO_SQLITE: join(dir, "shop.sqlite3"), MINTID_DATABASE_URL: "" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("checkout on PostgreSQL: one order, duplicates replayed, forged IDs refused", { skip: !process.env.MINTID_PG_URL && "MINTID_PG_URL is not set" }, async () => {
  await checkout({ MINTID_DATABASE_URL: process.env.MINTID_PG_URL });
});
