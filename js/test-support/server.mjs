// A loopback HTTP server for the browser tests: serves one HTML page, the
// files of a package directory under /pkg/ (and /node_modules/mintid/, where an
// application serves it), and JSON endpoints under /api/.
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { extname, join, normalize, sep } from "node:path";

const CONTENT_TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
};

async function readBody(request) {
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Starts the server on 127.0.0.1 and an ephemeral port.
 * `packageDir` is served under /pkg/ and /node_modules/mintid/, `page` at /, and
 * `api[name](body, request)` answers POST /api/<name> (its JSON body, if any) with its
 * JSON result.
 */
export async function startServer({ packageDir, page, api = {} }) {
  const server = createServer(async (request, response) => {
    try {
      const url = new URL(request.url, "http://127.0.0.1");
      if (request.method === "GET" && url.pathname === "/") {
        response.writeHead(200, { "content-type": CONTENT_TYPES[".html"] });
        response.end(page);
        return;
      }
      if (url.pathname === "/favicon.ico") {
        response.writeHead(204).end(); // a page without <link rel="icon"> asks for one
        return;
      }
      const mount = ["/pkg/", "/node_modules/mintid/"].find((prefix) => url.pathname.startsWith(prefix));
      if (request.method === "GET" && mount) {
        const relative = normalize(decodeURIComponent(url.pathname.slice(mount.length)));
        if (relative.startsWith("..") || relative.split(sep).includes("..")) {
          response.writeHead(403).end();
          return;
        }
        const body = await readFile(join(packageDir, relative));
        response.writeHead(200, { "content-type": CONTENT_TYPES[extname(relative)] ?? "application/octet-stream" });
        response.end(body);
        return;
      }
      const handler = url.pathname.startsWith("/api/") ? api[url.pathname.slice("/api/".length)] : undefined;
      if (request.method === "POST" && handler) {
        const text = await readBody(request);
        const result = await handler(text ? JSON.parse(text) : undefined, request);
        response.writeHead(200, { "content-type": CONTENT_TYPES[".json"] });
        response.end(JSON.stringify(result));
        return;
      }
      response.writeHead(404).end();
    } catch (error) {
      response.writeHead(error.code === "ENOENT" ? 404 : 500, { "content-type": "text/plain" });
      response.end(String(error));
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
