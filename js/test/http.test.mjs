// The HTTP integrations beyond the shared scenarios: the grant endpoint on Express and
// Fastify, options (routes, kind, stored headers, signed IDs in another header), the
// stored-response envelope and bad configuration.
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import express from "express";
import Fastify from "fastify";
import { ArgumentError, defaultKind, errorCodes, grantFields, HttpError, IdempotencyKey, KeyRing, mintRequestId, RecordPolicy } from "mintid";
import { fromStored, HttpIdempotency, toStored } from "mintid/http";
import * as expressHttp from "mintid/http/express";
import * as fastifyHttp from "mintid/http/fastify";
import { IdempotencyStore, migrate, sqliteDatabase } from "mintid/store/sqlite";

const dir = mkdtempSync(join(tmpdir(), "mintid-http-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

async function freshStore(policy = new RecordPolicy({ leaseMillis: 30_000, retentionMillis: 86_400_000 })) {
  files += 1;
  const database = sqliteDatabase(join(dir, `db${files}.sqlite`));
  await migrate(database);
  return new IdempotencyStore(database, policy);
}

function send(port, { method = "POST", path = "/", headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method, path, headers, agent: false }, (res) => {
      const chunks = [];
      res.on("data", (chunk) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const scope = (request) => (request.headers["x-user"] === undefined ? undefined : `user:${request.headers["x-user"]}`);

/** Each framework: an app with `setup(app)` applied, listening; returns its port and close. */
const FRAMEWORKS = {
  express: {
    module: expressHttp,
    async listen(setup) {
      const app = express();
      app.set("env", "test");
      setup(app, (handler) => async (req, res) => {
        const answer = await handler(req);
        res.status(answer.status).set(answer.headers ?? {}).json(answer.json);
      });
      const server = await new Promise((resolve) => {
        const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
      });
      return { port: server.address().port, close: () => new Promise((resolve) => server.close(resolve)) };
    },
  },
  fastify: {
    module: fastifyHttp,
    async listen(setup) {
      const app = Fastify();
      const plugins = [];
      const routes = [];
      const proxy = {
        use: (plugin) => plugins.push(plugin),
        post: (path, handler) => routes.push([path, handler]),
      };
      setup(proxy, (handler) => async (request, reply) => {
        const answer = await handler(request);
        return reply.code(answer.status).headers(answer.headers ?? {}).send(answer.json);
      });
      for (const plugin of plugins) await app.register(plugin);
      for (const [path, handler] of routes) app.post(path, handler);
      await app.listen({ port: 0, host: "127.0.0.1" });
      return { port: app.server.address().port, close: () => app.close() };
    },
  },
};

/** Registers the middleware, then the routes. */
function withMiddleware(middleware, routes) {
  return (app, route) => {
    app.use(middleware);
    routes(app, route);
  };
}

for (const [name, framework] of Object.entries(FRAMEWORKS)) {
  describe(`${name}`, () => {
    test("the grant endpoint issues a grant for the logged-in user's scope, never cached", async () => {
      const ring = new KeyRing({ id: 3, secret: randomBytes(32) });
      const endpoint = framework.module.grantEndpoint({ keyRing: ring, scope, ttlMillis: 60_000 });
      const app = await framework.listen((instance) => instance.post("/grant", endpoint));
      try {
        const before = Date.now();
        const granted = await send(app.port, { path: "/grant", headers: { "x-user": "ann" } });
        assert.equal(granted.status, 200);
        assert.equal(granted.headers["cache-control"], "no-store");
        const { grant, expiresMillis } = JSON.parse(granted.text);
        assert.ok(expiresMillis >= before + 60_000 && expiresMillis <= Date.now() + 60_000);
        assert.equal(grantFields(grant).expiresMillis, BigInt(expiresMillis));
        const id = mintRequestId(grant);
        assert.match(ring.verify(id, "user:ann"), /^[0-9a-f-]{36}$/);
        assert.throws(() => ring.verify(id, "user:bob"), { code: "request_id.bad_tag" });
        const anonymous = await send(app.port, { path: "/grant" });
        assert.equal(anonymous.status, 401);
        assert.match(anonymous.headers["content-type"], /^application\/problem\+json/);
        assert.equal(JSON.parse(anonymous.text).type, "about:blank");
      } finally {
        await app.close();
      }
    });

    test("routes, kind, stored headers and a signed ID in Idempotency-Key as a Structured Field String", async () => {
      const ring = new KeyRing({ id: 1, secret: randomBytes(32) });
      const store = await freshStore();
      let calls = 0;
      const middleware = framework.module.idempotency({
        store,
        scope: (request) => `user:${request.headers["x-user"]}`,
        keyRing: ring,
        requestIdHeader: "Idempotency-Key",
        routes: (request) => request.path !== "/free",
        kind: (request) => `test.${request.method.toLowerCase()}`,
        storedHeaders: ["x-kept"],
      });
      const handler = async () => {
        calls += 1;
        return { status: 200, headers: { "x-kept": `k${calls}`, "x-dropped": `d${calls}` }, json: { calls } };
      };
      const app = await framework.listen(withMiddleware(middleware, (instance, route) => {
        instance.post("/orders", route(handler));
        instance.post("/free", route(handler));
      }));
      try {
        const id = mintRequestId(ring.issueGrant("user:ann", Date.now() + 60_000));
        const headers = { "x-user": "ann", "idempotency-key": `"${id}"`, "content-type": "application/json" };
        const first = await send(app.port, { path: "/orders", headers, body: "{}" });
        assert.equal(first.status, 200);
        assert.equal(first.headers["x-dropped"], "d1");
        const replay = await send(app.port, { path: "/orders", headers: { ...headers, "idempotency-key": id }, body: "{}" });
        assert.equal(replay.headers["idempotent-replayed"], "true");
        assert.equal(replay.headers["x-kept"], "k1");
        assert.equal(replay.headers["x-dropped"], undefined);
        assert.equal(replay.text, first.text);
        const stored = await store.load(new IdempotencyKey("test.post", "user:ann", ring.verify(id, "user:ann")));
        assert.equal(stored?.record.status, "succeeded");
        const free = await send(app.port, { path: "/free", headers: { "x-user": "ann" }, body: "" });
        assert.equal(free.status, 200);
        const garbage = await send(app.port, { path: "/orders", headers: { "x-user": "ann", "idempotency-key": "\"no" }, body: "{}" });
        assert.equal(garbage.status, 400);
        assert.equal(JSON.parse(garbage.text).type, "https://mintid.dev/problems/invalid-request-id");
        assert.equal(calls, 2);
      } finally {
        await app.close();
      }
    });

    test("the grant option serves the endpoint, never covered; a store failure goes to onError, not into the answer", async () => {
      const ring = new KeyRing({ id: 4, secret: randomBytes(32) });
      const failures = [];
      const down = new IdempotencyStore(sqliteDatabase(join(dir, "missing", "db.sqlite")), new RecordPolicy({ leaseMillis: 30_000, retentionMillis: 86_400_000 }));
      const middleware = framework.module.idempotency({
        store: down,
        scope: (request) => `user:${request.headers["x-user"]}`,
        keyRing: ring,
        acceptIdempotencyKey: true,
        grant: { path: "/grant", scope },
        onError: (message, error) => failures.push([message, error]),
      });
      const app = await framework.listen(withMiddleware(middleware, (instance, route) => instance.post("/orders", route(async () => ({ status: 201, json: {} })))));
      try {
        const granted = await send(app.port, { path: "/grant", headers: { "x-user": "ann" } });
        assert.equal(granted.status, 200);
        assert.equal(grantFields(JSON.parse(granted.text).grant).expiresMillis > 0n, true);
        const refused = await send(app.port, { path: "/orders", headers: { "x-user": "ann", "idempotency-key": randomUUID() }, body: "" });
        assert.equal(refused.status, 503);
        assert.deepEqual(Object.keys(JSON.parse(refused.text)).sort(), ["status", "title", "type"]);
        assert.equal(failures.length, 1);
        assert.match(failures[0][0], /before the handler ran/);
        assert.equal(failures[0][1].code, "store.unavailable");
      } finally {
        await app.close();
      }
    });

    test("a client that goes away while the handler runs: its response is recorded all the same, and the retry replays it", async () => {
      const store = await freshStore(new RecordPolicy({ leaseMillis: 30_000, retentionMillis: 86_400_000, maxWaitMillis: 30_000 }));
      let calls = 0;
      let started;
      const handlerStarted = new Promise((resolve) => {
        started = resolve;
      });
      const middleware = framework.module.idempotency({ store, scope });
      const app = await framework.listen(withMiddleware(middleware, (instance, route) => instance.post("/orders", route(async (request) => {
        calls += 1;
        // Fastify's request wraps Node's; Express's is Node's.
        const socket = (request.raw ?? request).socket;
        started();
        if (!socket.destroyed) await new Promise((resolve) => socket.once("close", resolve));
        return { status: 201, json: { calls } };
      }))));
      try {
        const headers = { "x-user": "ann", "idempotency-key": randomUUID(), "content-type": "application/json" };
        const client = httpRequest({ host: "127.0.0.1", port: app.port, method: "POST", path: "/orders", headers, agent: false });
        client.on("error", () => undefined);
        client.end('{"amount":1}');
        await handlerStarted;
        client.destroy();
        const retry = await send(app.port, { path: "/orders", headers, body: '{"amount":1}' });
        assert.equal(retry.status, 201);
        assert.equal(retry.headers["idempotent-replayed"], "true");
        assert.deepEqual(JSON.parse(retry.text), { calls: 1 });
        assert.equal(calls, 1);
      } finally {
        await app.close();
      }
    });

    test("a kind the core refuses is the server's fault (500), not the client's", async () => {
      const middleware = framework.module.idempotency({ store: await freshStore(), scope: () => "user:ann", kind: () => "Not A Kind" });
      const app = await framework.listen(withMiddleware(middleware, (instance, route) => instance.post("/", route(async () => ({ status: 200, json: {} })))));
      try {
        const answer = await send(app.port, { headers: { "idempotency-key": randomUUID() }, body: "" });
        assert.equal(answer.status, 500);
      } finally {
        await app.close();
      }
    });
  });
}

describe("the neutral core", () => {
  test("the stored envelope keeps status, selected headers and body bytes", () => {
    const body = new Uint8Array([0, 13, 10, 13, 10, 255]);
    const answer = { status: 201, headers: [["content-type", "application/octet-stream"], ["location", "/x"], ["set-cookie", "a=1"]], body };
    const stored = toStored(answer, ["location"]);
    assert.equal(stored.contentType, "application/octet-stream");
    assert.equal(Buffer.from(stored.body).toString("latin1"), "mintid-http/1 201\r\nlocation: /x\r\n\r\n\u0000\r\n\r\n\u00ff");
    const back = fromStored(stored);
    assert.equal(back.status, 201);
    assert.deepEqual(back.headers, [["content-type", "application/octet-stream"], ["location", "/x"]]);
    assert.deepEqual(Buffer.from(back.body), Buffer.from(body));
    assert.throws(
      () => fromStored({ contentType: "text/plain", body: new TextEncoder().encode("plain") }),
      (error) => error instanceof HttpError && error.code === "http.bad_stored_response" && error.position === 5,
    );
  });

  test("bad options are refused when the middleware is built", async () => {
    const store = await freshStore();
    assert.throws(() => new HttpIdempotency({ scope: () => "s" }), TypeError);
    assert.throws(() => new HttpIdempotency({ store }), TypeError);
    assert.throws(() => new HttpIdempotency({ store, scope: () => "s", keyRing: {} }), TypeError);
    // Typed as in Python and Kotlin: an ArgumentError (a RangeError) with the core's code.
    const argument = (code) => (error) => error instanceof ArgumentError && error instanceof RangeError && error.code === code;
    assert.throws(() => new HttpIdempotency({ store, scope: () => "s", bodyLimit: -1 }), argument("argument.negative"));
    assert.throws(() => new HttpIdempotency({ store, scope: () => "s", bodyLimit: 1.5 }), argument("argument.out_of_range"));
    assert.throws(() => new HttpIdempotency({ store, scope: () => "s", bodyLimit: "1" }), TypeError);
    assert.throws(() => expressHttp.grantEndpoint({ keyRing: {}, scope }), TypeError);
    const keyRing = new KeyRing({ id: 1, secret: randomBytes(32) });
    assert.throws(() => fastifyHttp.grantEndpoint({ keyRing, scope, ttlMillis: 0 }), argument("argument.out_of_range"));
    assert.throws(() => fastifyHttp.grantEndpoint({ keyRing, scope, ttlMillis: -5 }), argument("argument.negative"));
  });
});

describe("a body a parser read before the middleware (issue 25, item 6)", () => {
  const orderHeaders = (key, type = "application/json") => ({ "x-user": "ann", "idempotency-key": key, "content-type": type });

  /** An Express app with `parser` mounted before the middleware, the usual habit; `failures` gets what reaches the error handler. */
  async function expressAfter(parser, store, failures) {
    let calls = 0;
    const app = await FRAMEWORKS.express.listen((instance) => {
      instance.use(parser);
      instance.use(expressHttp.idempotency({ store, scope }));
      instance.post("/orders", (req, res) => {
        calls += 1;
        res.status(201).json({ order: calls, received: req.body });
      });
      instance.use((error, _req, res, _next) => {
        failures.push(error);
        res.status(500).json({});
      });
    });
    return { ...app, calls: () => calls };
  }

  test("express.json() first, its raw bytes kept (keepRawBody): another body under the same key is 422, the same body replays", async () => {
    const app = await expressAfter(express.json({ verify: expressHttp.keepRawBody }), await freshStore(), []);
    try {
      const key = randomUUID();
      const first = await send(app.port, { path: "/orders", headers: orderHeaders(key), body: '{"amount":1}' });
      assert.equal(first.status, 201);
      assert.deepEqual(JSON.parse(first.text).received, { amount: 1 });
      const other = await send(app.port, { path: "/orders", headers: orderHeaders(key), body: '{"amount":9999}' });
      assert.equal(other.status, 422);
      assert.equal(JSON.parse(other.text).type, "https://mintid.dev/problems/fingerprint-mismatch");
      const again = await send(app.port, { path: "/orders", headers: orderHeaders(key), body: '{ "amount": 1 }' });
      assert.equal(again.status, 201);
      assert.equal(again.headers["idempotent-replayed"], "true");
      assert.equal(again.text, first.text);
      // A content type the parser skips: the middleware reads the body itself.
      const textKey = randomUUID();
      assert.equal((await send(app.port, { path: "/orders", headers: orderHeaders(textKey, "text/plain"), body: "one" })).status, 201);
      assert.equal((await send(app.port, { path: "/orders", headers: orderHeaders(textKey, "text/plain"), body: "two" })).status, 422);
      assert.equal(app.calls(), 2);
    } finally {
      await app.close();
    }
  });

  test("express.json() first without the raw bytes: refused with http.body_consumed naming the fix, nothing run or stored", async () => {
    const store = await freshStore();
    const failures = [];
    const app = await expressAfter(express.json(), store, failures);
    try {
      const key = randomUUID();
      for (const body of ['{"amount":1}', '{"amount":9999}']) {
        const answer = await send(app.port, { path: "/orders", headers: orderHeaders(key), body });
        assert.equal(answer.status, 500);
      }
      assert.equal(app.calls(), 0);
      assert.equal(failures.length, 2);
      const [error] = failures;
      assert.ok(error instanceof HttpError);
      assert.equal(error.code, "http.body_consumed");
      const template = errorCodes().find((entry) => entry.code === "http.body_consumed").template;
      assert.ok(error.message.startsWith(template.slice(0, template.indexOf("{"))), error.message);
      assert.match(error.message, /mount idempotency\(\) before express\.json\(\).*verify: keepRawBody/);
      assert.equal(await store.load(new IdempotencyKey(defaultKind("POST", "/orders"), "user:ann", key)), null);
      // An empty body the parser read is still no body to refuse: nothing was taken.
      const empty = await send(app.port, { path: "/orders", headers: { ...orderHeaders(randomUUID()), "content-length": "0" } });
      assert.equal(empty.status, 201);
    } finally {
      await app.close();
    }
  });

  test("fastify: its parsers run after the plugin read the raw body, so another body under the same key is 422", async () => {
    const store = await freshStore();
    const app = await FRAMEWORKS.fastify.listen((instance, route) => {
      instance.use(fastifyHttp.idempotency({ store, scope }));
      instance.post("/orders", route(async (request) => ({ status: 201, json: { received: request.body } })));
    });
    try {
      const key = randomUUID();
      const first = await send(app.port, { path: "/orders", headers: orderHeaders(key), body: '{"amount":1}' });
      assert.equal(first.status, 201);
      assert.deepEqual(JSON.parse(first.text).received, { amount: 1 });
      assert.equal((await send(app.port, { path: "/orders", headers: orderHeaders(key), body: '{"amount":9999}' })).status, 422);
      assert.equal((await send(app.port, { path: "/orders", headers: orderHeaders(key), body: '{"amount":1}' })).headers["idempotent-replayed"], "true");
    } finally {
      await app.close();
    }
  });
});
