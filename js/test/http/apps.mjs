// The test app of tests/http/README.md on Express and on Fastify: POST, PATCH and GET
// /orders behind the mintid middleware, the user taken from `x-test-user`, the
// handler's directive (status, throw, gate) from `x-test-handler`.
import express from "express";
import Fastify from "fastify";
import { idempotency as expressIdempotency } from "mintid/http/express";
import { idempotency as fastifyIdempotency } from "mintid/http/fastify";

/** What the app's handlers share with the runner: the call count and the gates (by name, created on first use). */
export function handlerState() {
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
  return { calls: 0, gate, openAll };
}

/** Runs one handler call: what to answer for `method` with the parsed `body` (or null). */
async function handle(state, method, directiveText, received) {
  state.calls += 1;
  const order = state.calls;
  const directive = directiveText === undefined ? {} : JSON.parse(directiveText);
  if (directive.gate !== undefined) await state.gate(directive.gate).opened;
  if (directive.throw) throw new Error("the handler failed");
  if (directive.status !== undefined) return { status: directive.status, headers: {}, json: { error: `status ${directive.status}` } };
  if (method === "GET") return { status: 200, headers: {}, json: { orders: order } };
  if (method === "PATCH") return { status: 200, headers: {}, json: { order, received } };
  return { status: 201, headers: { location: `/orders/${order}` }, json: { order, received } };
}

function middlewareOptions(options) {
  return { ...options, scope: (request) => `user:${request.headers["x-test-user"] ?? "anonymous"}` };
}

/** An Express app listening on 127.0.0.1; `close()` stops it. */
export async function expressApp(state, options) {
  const app = express();
  app.set("env", "test");
  app.use(expressIdempotency(middlewareOptions(options)));
  const route = async (req, res) => {
    const received = req.body === undefined || Buffer.isBuffer(req.body) ? null : req.body;
    const answer = await handle(state, req.method, req.get("x-test-handler"), received);
    res.status(answer.status).set(answer.headers).json(answer.json);
  };
  app.get("/orders", route);
  app.post("/orders", route);
  app.patch("/orders", route);
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
export async function fastifyApp(state, options) {
  const app = Fastify({ logger: false });
  await app.register(fastifyIdempotency(middlewareOptions(options)));
  const route = async (request, reply) => {
    const received = request.body === undefined || typeof request.body === "string" ? null : request.body;
    const answer = await handle(state, request.method, request.headers["x-test-handler"], received);
    return reply.code(answer.status).headers(answer.headers).send(answer.json);
  };
  app.get("/orders", route);
  app.post("/orders", route);
  app.patch("/orders", route);
  await app.listen({ port: 0, host: "127.0.0.1" });
  return { port: app.server.address().port, close: () => app.close() };
}

export const FRAMEWORKS = { express: expressApp, fastify: fastifyApp };
