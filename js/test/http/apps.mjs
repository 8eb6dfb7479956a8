// The test app of tests/http/README.md on Express and on Fastify: POST, PATCH and GET
// /orders behind the mintid middleware, the user taken from `x-test-user`, the
// handler's directive (status, throw, gate, contentType, write) from `x-test-handler`; with
// `mounts`, the app with the middleware inside it is mounted at each prefix.
import express from "express";
import Fastify from "fastify";
import { idempotency as expressIdempotency } from "mintid/http/express";
import { idempotency as fastifyIdempotency } from "mintid/http/fastify";

/**
 * What the app's handlers share with the runner: the call count, the gates (by name,
 * created on first use) and `write(transaction)`, the runner's `write` directive.
 */
export function handlerState(write) {
  const gates = new Map();
  const gate = (name) => {
    if (!gates.has(name)) {
      let open;
      const opened = new Promise((resolve) => {
        open = resolve;
      });
      gates.set(name, { opened, open });
    }
    return gates.get(name);
  };
  const openAll = () => {
    for (const { open } of gates.values()) open();
  };
  return { calls: 0, gate, openAll, write };
}

/**
 * Runs one handler call: what to answer for `method` with the parsed `body` (or null);
 * `mintid` is what the middleware gave the route (`req.mintid`, `request.mintid`), if anything.
 */
async function handle(state, method, directiveText, received, mintid) {
  state.calls += 1;
  const order = state.calls;
  const directive = directiveText === undefined ? {} : JSON.parse(directiveText);
  if (directive.write) await state.write(mintid);
  if (directive.gate !== undefined) await state.gate(directive.gate).opened;
  if (directive.throw) throw new Error("the handler failed");
  const type = directive.contentType === undefined ? {} : { "content-type": directive.contentType };
  if (directive.status !== undefined) return { status: directive.status, headers: type, json: { error: `status ${directive.status}` } };
  if (method === "GET") return { status: 200, headers: type, json: { orders: order } };
  if (method === "PATCH") return { status: 200, headers: type, json: { order, received } };
  return { status: 201, headers: { location: `/orders/${order}`, ...type }, json: { order, received } };
}

function middlewareOptions({ grant, ...options }) {
  // No test header: no authenticated caller (the scope function's undefined).
  const scope = (request) => (request.headers["x-test-user"] === undefined ? undefined : `user:${request.headers["x-test-user"]}`);
  return { ...options, scope, ...(grant === undefined ? {} : { grant: { path: grant, scope } }) };
}

/** An Express app listening on 127.0.0.1; `close()` stops it. */
export async function expressApp(state, { mounts = [], ...options }) {
  const app = express();
  app.set("env", "test");
  const orders = express.Router();
  orders.use(expressIdempotency(middlewareOptions(options)));
  const route = async (req, res) => {
    const received = req.body === undefined || Buffer.isBuffer(req.body) ? null : req.body;
    const answer = await handle(state, req.method, req.get("x-test-handler"), received, req.mintid);
    res.status(answer.status).set(answer.headers).json(answer.json);
  };
  orders.get("/orders", route);
  orders.post("/orders", route);
  orders.patch("/orders", route);
  if (mounts.length === 0) app.use(orders);
  for (const prefix of mounts) app.use(prefix, orders);
  const server = await new Promise((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  return {
    port: server.address().port,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(resolve);
    }),
  };
}

/** A Fastify app listening on 127.0.0.1; `close()` stops it. */
export async function fastifyApp(state, { mounts = [], ...options }) {
  const app = Fastify({ logger: false });
  const route = async (request, reply) => {
    const received = request.body === undefined || typeof request.body === "string" ? null : request.body;
    const answer = await handle(state, request.method, request.headers["x-test-handler"], received, request.mintid);
    // A body of another content type than JSON is sent as its text.
    const payload = "content-type" in answer.headers ? JSON.stringify(answer.json) : answer.json;
    return reply.code(answer.status).headers(answer.headers).send(payload);
  };
  const orders = async (instance) => {
    await instance.register(fastifyIdempotency(middlewareOptions(options)));
    instance.get("/orders", route);
    instance.post("/orders", route);
    instance.patch("/orders", route);
  };
  if (mounts.length === 0) await app.register(orders);
  for (const prefix of mounts) await app.register(orders, { prefix });
  await app.listen({ port: 0, host: "127.0.0.1" });
  return { port: app.server.address().port, close: () => app.close() };
}

export const FRAMEWORKS = { express: expressApp, fastify: fastifyApp };
