// Starts @vercel/cosmosdb-server the way our tests and `make dev` need it:
// keep-alive connections (the stock CLI closes every one, ~20 ops/s), a real 404
// for a missing document (the stock read handler throws and answers 500), and an account
// whose endpoint is the address the client used (the stock one names the listening port, so
// a client that came through a proxy or port forward would leave it for the next request).
// Its queries: cosmos_queries.js.
"use strict";

const path = require("path");

const lib = path.dirname(require.resolve("@vercel/cosmosdb-server"));

// Patch the read-document handler before the router captures it.
const readDocument = require(path.join(lib, "handler", "read-document"));
const stockRead = readDocument.default;
readDocument.default = (account, req, res, params) => {
  try {
    return stockRead(account, req, res, params);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    // The stock handler dereferences the missing document; answer as Cosmos DB does.
    res.statusCode = 404;
    return {
      code: "NotFound",
      message: "Entity with the specified id does not exist in the system.",
    };
  }
};

// The account document (GET /): its locations name the endpoint the client reached, as a
// real account names its own public address rather than a backend's.
const readMeta = require(path.join(lib, "handler", "read-meta"));
const stockMeta = readMeta.default;
readMeta.default = (account, req, res, params) => {
  const meta = stockMeta(account, req, res, params);
  const here = `https://${req.headers.host}/`;
  const at = (locations) => locations.map((l) => ({ ...l, databaseAccountEndpoint: here }));
  return {
    ...meta,
    writableLocations: at(meta.writableLocations),
    readableLocations: at(meta.readableLocations),
  };
};

// Queries scoped to their partition and linear in time (before the router takes its handlers).
require("./cosmos_queries");

const { createHttpsServer } = require("@vercel/cosmosdb-server");

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
}

const host = arg("--host", "127.0.0.1");
const port = parseInt(arg("--port", "8081"), 10);

const server = createHttpsServer({ keepAlive: true });

// Requests served, by kind (`GET /_requests` answers them as JSON): what the bench counts,
// since this server reports no request charge.
const served = {};
const route = server.listeners("request");
server.removeAllListeners("request");
server.on("request", (req, res) => {
  if (req.method === "GET" && req.url === "/_requests") {
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify(served));
    return;
  }
  const kind = kindOf(req);
  served[kind] = (served[kind] || 0) + 1;
  if (WRITES.has(kind) && /return=minimal/i.test(String(req.headers.prefer || ""))) {
    minimal(res);
  }
  for (const listener of route) listener.call(server, req, res);
});

// A write sent with `Prefer: return=minimal` (the SDK's `no_response`) is answered as Cosmos
// DB answers it: its status and headers (the new ETag among them), no document in the body.
const WRITES = new Set(["create", "upsert", "replace", "patch"]);
function minimal(res) {
  const end = res.end;
  res.end = function (body, ...rest) {
    if (res.statusCode < 300 && typeof body === "string") {
      return end.call(this, "", ...rest);
    }
    return end.call(this, body, ...rest);
  };
}

function kindOf(req) {
  const url = req.url.split("?")[0].replace(/\/+$/, "");
  const segments = url.split("/").filter(Boolean);
  const onDocs = segments.length >= 5 && segments[4] === "docs";
  if (!onDocs) return "metadata";
  const header = (name) => String(req.headers[name] || "").toLowerCase() === "true";
  if (segments.length === 5) {
    if (req.method === "POST" && header("x-ms-documentdb-isquery")) return "query";
    if (req.method === "POST" && header("x-ms-documentdb-is-upsert")) return "upsert";
    if (req.method === "POST") return "create";
    return "feed";
  }
  return { GET: "read", PUT: "replace", PATCH: "patch", DELETE: "delete" }[req.method] || "other";
}
server.keepAliveTimeout = 60_000;
server.headersTimeout = 65_000;
server.listen(port, host, () => {
  console.log(`cosmos ready on https://${host}:${server.address().port}`);
});

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
