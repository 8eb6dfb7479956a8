// The HTTP conformance scenarios (tests/http/scenarios.json) against the Express and the
// Fastify integration, over real HTTP on 127.0.0.1, on SQLite and PostgreSQL; each scenario
// on a fresh database. An unknown config key, step, header value or expectation fails.
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, test } from "node:test";
import { KeyRing, mintRequestId, problemDetails, RecordPolicy, Uuid7 } from "mintid";
import { IdempotencyStore, migrate } from "mintid/store/sqlite";
import { FRAMEWORKS, handlerState } from "./http/apps.mjs";
import { dialects, freshDatabase, sql } from "./store/databases.mjs";

const { scenarios } = JSON.parse(readFileSync(new URL("../../tests/http/scenarios.json", import.meta.url), "utf8"));
const CONFIG_KEYS = new Set(["signed", "storeErrors", "maxWaitMillis", "bodyLimit", "mounts", "grant", "sameTransaction"]);
// The test table of the handler's `write` directive (tests/http/README.md).
const TEST_TABLE = "CREATE TABLE mintid_test_orders (n integer)";
/** `INSERT_ROW` through each library's own object: a `pg` client, a `mysql2` connection, a better-sqlite3 `Database`. */
const OWN_WRITE = {
  postgres: (client) => client.query(INSERT_ROW),
  mysql: (connection) => connection.query(INSERT_ROW),
  sqlite: (db) => db.exec(INSERT_ROW),
};
const INSERT_ROW = "INSERT INTO mintid_test_orders (n) VALUES (1)";
const DIALECTS = dialects().filter(({ dialect }) => dialect !== "mysql");

function only(object, allowed, what) {
  for (const key of Object.keys(object)) assert.ok(allowed.includes(key), `unknown ${what} "${key}"`);
}

/** The header values of one scenario run: keys and request IDs by name, minted once. */
function headerValues(ring) {
  const keys = new Map();
  const ids = new Map();
  const grant = (user, expired) => ring.issueGrant(`user:${user}`, Date.now() + (expired ? -1000 : 3_600_000));
  return (value, user) => {
    if (typeof value === "string") return value;
    if ("key" in value) {
      only(value, ["key", "form"], "key field");
      if (!keys.has(value.key)) keys.set(value.key, randomUUID());
      const key = keys.get(value.key);
      if (value.form === undefined) return key;
      assert.equal(value.form, "sf-string", `unknown key form ${value.form}`);
      return `"${key}"`;
    }
    if ("requestId" in value) {
      only(value, ["requestId", "grantFor", "grant", "tamper", "ageMillis"], "requestId field");
      assert.ok(ring, "a requestId needs the signed config");
      if (!ids.has(value.requestId)) {
        if (value.grant !== undefined) assert.equal(value.grant, "expired", `unknown grant ${value.grant}`);
        const granted = grant(value.grantFor ?? user, value.grant === "expired");
        const uuid = value.ageMillis === undefined ? undefined : Uuid7.fromFields({ unixMillis: Date.now() - value.ageMillis, randA: 0, randB: 1n }).toString();
        ids.set(value.requestId, mintRequestId(granted, uuid));
      }
      const id = ids.get(value.requestId);
      if (!value.tamper) return id;
      const at = 40; // inside the tag
      return id.slice(0, at) + (id[at] === "A" ? "B" : "A") + id.slice(at + 1);
    }
    assert.fail(`unknown header value ${JSON.stringify(value)}`);
  };
}

function bodyOf(body) {
  only(body, ["json", "jsonText", "text", "none"], "body kind");
  if ("json" in body) return { type: "application/json", bytes: Buffer.from(JSON.stringify(body.json)) };
  if ("jsonText" in body) return { type: "application/json", bytes: Buffer.from(body.jsonText) };
  if ("text" in body) return { type: "text/plain", bytes: Buffer.from(body.text) };
  return { type: undefined, bytes: undefined };
}

function send(port, spec, resolveHeader) {
  only(spec, ["method", "path", "user", "headers", "body", "handler"], "request field");
  // A step without a user has no authenticated caller: no test header.
  const headers = spec.user === undefined ? {} : { "x-test-user": spec.user };
  for (const [name, value] of Object.entries(spec.headers ?? {})) headers[name] = resolveHeader(value, spec.user);
  if (spec.handler !== undefined) {
    only(spec.handler, ["status", "throw", "gate", "contentType", "write"], "handler directive");
    headers["x-test-handler"] = JSON.stringify(spec.handler);
  }
  const body = bodyOf(spec.body ?? { none: true });
  if (body.type !== undefined) headers["content-type"] = body.type;
  if (body.bytes !== undefined) headers["content-length"] = body.bytes.length;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method: spec.method, path: spec.path, headers, agent: false }, (res) => {
      const chunks = [];
      res.on("data", (chunk) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body.bytes);
  });
}

function checkResponse(response, expect, responses, where) {
  only(expect, ["status", "problem", "replayed", "retryAfter", "headers", "json", "sameBodyAs", "bare", "members", "detailContains"], "expectation");
  const text = response.body.toString("utf8");
  assert.equal(response.status, expect.status, `${where}: status (body ${text})`);
  if (expect.problem !== undefined) {
    assert.match(response.headers["content-type"] ?? "", /^application\/problem\+json/, `${where}: problem content type`);
    const problem = JSON.parse(text);
    if (expect.problem === "about:blank") {
      assert.equal(problem.type, "about:blank", `${where}: problem type`);
    } else {
      const details = problemDetails(expect.problem);
      assert.ok(details, `unknown problem ${expect.problem}`);
      assert.deepEqual({ type: problem.type, title: problem.title, status: problem.status }, details, `${where}: problem`);
    }
    assert.equal(problem.status, expect.status, `${where}: problem status`);
  }
  if (expect.bare !== undefined) {
    assert.equal(expect.bare, true, "bare can only be true");
    assert.deepEqual(Object.keys(JSON.parse(text)).sort(), ["status", "title", "type"], `${where}: a bare problem`);
  }
  for (const part of expect.detailContains ?? []) {
    const detail = JSON.parse(text).detail ?? "";
    assert.ok(detail.includes(part), `${where}: detail ${JSON.stringify(detail)} lacks ${JSON.stringify(part)}`);
  }
  for (const member of expect.members ?? []) assert.ok(member in JSON.parse(text), `${where}: body member ${member} (${text})`);
  if (expect.replayed !== undefined) {
    assert.equal(response.headers["idempotent-replayed"], expect.replayed ? "true" : undefined, `${where}: replay marker`);
  }
  if (expect.retryAfter !== undefined) {
    assert.equal(expect.retryAfter, true, "retryAfter can only be true");
    assert.match(response.headers["retry-after"] ?? "", /^[1-9][0-9]*$/, `${where}: Retry-After`);
  }
  for (const [name, value] of Object.entries(expect.headers ?? {})) {
    assert.equal(response.headers[name.toLowerCase()], value, `${where}: header ${name}`);
  }
  if (expect.json !== undefined) {
    const json = JSON.parse(text);
    for (const [name, value] of Object.entries(expect.json)) assert.deepEqual(json[name], value, `${where}: body member ${name}`);
  }
  if (expect.sameBodyAs !== undefined) {
    const first = responses.get(expect.sameBodyAs);
    assert.ok(first, `${where}: no response named ${expect.sameBodyAs}`);
    assert.equal(response.status, first.status, `${where}: same status as ${expect.sameBodyAs}`);
    assert.equal(text, first.body.toString("utf8"), `${where}: same body as ${expect.sameBodyAs}`);
  }
}

async function runScenario(scenario, framework, db) {
  only(scenario, ["name", "doc", "config", "steps"], "scenario field");
  const config = scenario.config ?? {};
  for (const key of Object.keys(config)) assert.ok(CONFIG_KEYS.has(key), `unknown config "${key}"`);
  const policy = new RecordPolicy({
    leaseMillis: 30_000,
    retentionMillis: 86_400_000,
    storeErrors: config.storeErrors ?? true,
    maxWaitMillis: config.maxWaitMillis ?? 0,
    pollMillis: 20,
  });
  const database = db.open();
  await migrate(database);
  await database.withConnection((connection) => connection.execute(TEST_TABLE));
  const up = new IdempotencyStore(database, policy);
  const down = new IdempotencyStore(db.unavailable(), policy);
  let storageDown = false;
  const current = () => (storageDown ? down : up);
  const store = {
    policy,
    runOnce: (...args) => current().runOnce(...args),
    inTransaction: (...args) => current().inTransaction(...args),
    get database() {
      return current().database;
    },
  };
  const ring = config.signed ? new KeyRing({ id: 7, secret: randomBytes(32) }) : undefined;
  const same = config.sameTransaction ?? false;
  // The `write` directive: on the record's transaction (sameTransaction), through the database
  // library's own object as an application writes, else committed at once.
  const write = async (mintid) => {
    if (!same) return database.withConnection((connection) => connection.execute(INSERT_ROW));
    assert.ok(mintid, "the handler got the record's transaction");
    assert.equal(mintid.client, mintid.transaction.client);
    await OWN_WRITE[database.dialect](mintid.client);
  };
  const state = handlerState(write);
  const app = await FRAMEWORKS[framework](state, {
    store,
    ...(same ? { sameTransaction: true } : {}),
    ...(ring ? { keyRing: ring } : {}),
    ...(config.bodyLimit === undefined ? {} : { bodyLimit: config.bodyLimit }),
    ...(config.mounts === undefined ? {} : { mounts: config.mounts }),
    ...(config.grant === undefined ? {} : { grant: config.grant }),
    onError: () => undefined,
  });
  const resolveHeader = headerValues(ring);
  const responses = new Map();
  const background = new Map();
  try {
    for (const [index, step] of scenario.steps.entries()) {
      const where = `${scenario.name} step ${index}`;
      if ("request" in step) {
        only(step, ["name", "request", "expect", "background"], "step field");
        const sent = send(app.port, step.request, resolveHeader).then((response) => {
          checkResponse(response, step.expect, responses, where);
          if (step.name !== undefined) responses.set(step.name, response);
        });
        if (step.background) background.set(step.name, sent);
        else await sent;
      } else if ("await" in step) {
        assert.ok(background.has(step.await), `${where}: no background request ${step.await}`);
        await background.get(step.await);
        background.delete(step.await);
      } else if ("open" in step) {
        state.gate(step.open).open();
      } else if ("untilHandlerCalls" in step) {
        const deadline = Date.now() + 5000;
        while (state.calls < step.untilHandlerCalls) {
          assert.ok(Date.now() < deadline, `${where}: the handler was not called ${step.untilHandlerCalls} times`);
          await sleep(5);
        }
      } else if ("sleepMillis" in step) {
        await sleep(step.sleepMillis);
      } else if ("storage" in step) {
        assert.ok(step.storage === "up" || step.storage === "down", `${where}: storage must be up or down`);
        storageDown = step.storage === "down";
      } else if ("check" in step) {
        only(step.check, ["handlerCalls", "writes"], "check");
        if (step.check.handlerCalls !== undefined) assert.equal(state.calls, step.check.handlerCalls, `${where}: handler calls`);
        if (step.check.writes !== undefined) {
          const count = sql(database.dialect, "count", "SELECT COUNT(*) AS n FROM mintid_test_orders");
          const { rows } = await database.withConnection((connection) => connection.run(count, []));
          assert.equal(Number(rows[0][0]), step.check.writes, `${where}: committed rows`);
        }
      } else {
        assert.fail(`${where}: unknown step ${JSON.stringify(step)}`);
      }
    }
    assert.equal(background.size, 0, `${scenario.name}: background requests never awaited`);
  } finally {
    state.openAll();
    await Promise.allSettled(background.values());
    await app.close();
  }
}

test("the scenarios file has scenarios with unique names", () => {
  assert.ok(scenarios.length > 0);
  assert.equal(new Set(scenarios.map(({ name }) => name)).size, scenarios.length);
});

for (const { dialect, skip } of DIALECTS) {
  for (const framework of Object.keys(FRAMEWORKS)) {
    describe(`HTTP scenarios on ${framework} with ${dialect}`, { skip }, () => {
      for (const scenario of scenarios) {
        test(scenario.name, async () => {
          const db = await freshDatabase(dialect);
          try {
            await runScenario(scenario, framework, db);
          } finally {
            await db.close();
          }
        });
      }
    });
  }
}
