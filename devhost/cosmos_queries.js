// Queries on the local Cosmos server (@vercel/cosmosdb-server and its compiler,
// @zeit/cosmosdb-query) at the cost Cosmos DB's own would have on the same documents: scoped
// to the partition the request names, in time linear in what they read. Loaded by
// cosmos_launcher.js before the server's router takes its handlers. Same answers as stock;
// tests/integration/test_cosmos_launcher.py holds them to it.
"use strict";

const path = require("path");

const lib = path.dirname(require.resolve("@vercel/cosmosdb-server"));

// Queries in linear time. The stock query compiler gathers a container's documents with
// `reduce(($, c) => [...$, {c}], [])`, and the server strips `undefined` from results with the
// same spread: each copies the array built so far, so a query costs the square of the
// documents it reads (10,000 inbox items: 170 ms for a TOP 100, 2.6 ms in linear time).
// The rewrite makes each such accumulator push onto the array it already has; same results.
const query = path.dirname(require.resolve("@zeit/cosmosdb-query"));
const transformer = require(path.join(query, "transformer"));
const helpers = require(path.join(query, "helpers"));
const isAccumulator = (node) =>
  node &&
  node.type === "SpreadElement" &&
  node.argument.type === "Identifier" &&
  node.argument.name === "$";
const id = (name) => ({ type: "Identifier", name });
function pushing(body) {
  if (body.type === "ArrayExpression" && isAccumulator(body.elements[0])) {
    const push = { type: "MemberExpression", object: id("$"), property: id("push") };
    const call = { type: "CallExpression", callee: push, arguments: body.elements.slice(1) };
    return { type: "SequenceExpression", expressions: [call, id("$")] };
  }
  if (body.type === "ConditionalExpression") {
    return { ...body, consequent: pushing(body.consequent), alternate: pushing(body.alternate) };
  }
  return body;
}
function linear(node) {
  if (!node || typeof node !== "object") return;
  if (Array.isArray(node)) return node.forEach(linear);
  const [first] = node.params || [];
  if (node.type === "ArrowFunctionExpression" && first && first.name === "$") {
    node.body = pushing(node.body);
  }
  for (const key of Object.keys(node)) linear(node[key]);
}
const stockTransform = transformer.default;
transformer.default = (ast) => {
  const js = stockTransform(ast);
  linear(js);
  return js;
};
helpers.stripUndefined = function strip(value) {
  if (Array.isArray(value)) {
    const out = [];
    for (const v of value) if (v !== undefined) out.push(strip(v));
    return out;
  }
  if (value && typeof value === "object") {
    const out = {};
    for (const key of Object.keys(value)) if (value[key] !== undefined) out[key] = strip(value[key]);
    return out;
  }
  return value;
};

// ORDER BY with each document's sort keys read once, not at every comparison (the stock sort
// walks both documents' paths per comparison: 40 ms for 10,000 inbox items, 15 ms so).
const stockSort = helpers.sort;
const TYPE_ORDER = ["undefined", "null", "boolean", "number", "string", "array", "object"];
const typeOf = (v) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
function compare(a, b) {
  // As the stock comparator: by type first, then by value; objects (and arrays) tie.
  if (a === b) return 0;
  const [ta, tb] = [typeOf(a), typeOf(b)];
  if (ta !== tb) return TYPE_ORDER.indexOf(ta) < TYPE_ORDER.indexOf(tb) ? -1 : 1;
  if (ta === "object") return 0;
  return a < b ? -1 : 1;
}
function valueAt(doc, keys) {
  let value = doc;
  for (const key of keys) {
    if (typeof value !== "object" || value === null) return undefined;
    value = value[key];
  }
  return value;
}
helpers.sort = (collection, getRid, compositeIndexes, ...orders) => {
  stockSort([], getRid, compositeIndexes, ...orders); // its composite index check, on nothing
  const rows = collection.map((doc) => ({
    doc,
    keys: orders.map(([keys]) => valueAt(doc, keys)),
    rid: getRid(doc),
  }));
  rows.sort((a, b) => {
    for (let i = 0; i < orders.length; i += 1) {
      const r = compare(a.keys[i], b.keys[i]);
      if (r !== 0) return orders[i][1] ? -r : r;
    }
    return compare(a.rid, b.rid);
  });
  // One ORDER BY path leaves out the documents without it, as the stock sort does.
  const kept = orders.length === 1 ? rows.filter((r) => r.keys[0] !== undefined) : rows;
  return kept.map((r) => r.doc);
};

// The functions a local search calls on every document, without the stock wrapper's generic
// argument checks (a closure per call; a third of a search's time): same answers, same errors.
const builtins = require(path.join(query, "builtin-functions"));
const { SyntaxError: QuerySyntaxError } = require(path.join(query, "parser"));
builtins.CONTAINS = function CONTAINS(text, part) {
  if (arguments.length !== 2) throw new QuerySyntaxError("The CONTAINS function requires 2 argument(s)");
  return typeof text === "string" && typeof part === "string" ? text.includes(part) : undefined;
};
builtins.LOWER = function LOWER(text) {
  if (arguments.length !== 1) throw new QuerySyntaxError("The LOWER function requires 1 argument(s)");
  return typeof text === "string" ? text.toLowerCase() : undefined;
};

// A query that names a partition reads that partition only, as Cosmos DB's does (the stock
// server reads the whole container: with 10,000 users, every digest's queries read all of
// theirs). Each container keeps its documents by partition beside the stock map.
const Items = require(path.join(lib, "account", "items")).default;
const stockSet = Items.prototype._set;
const stockDelete = Items.prototype.delete;
const stockQuery = Items.prototype.query;
function partitionOf(items, data) {
  if (!items._byPartition) items._byPartition = new Map();
  const key = JSON.stringify(items._getPartition(data) ?? null);
  if (!items._byPartition.has(key)) items._byPartition.set(key, new Map());
  return items._byPartition.get(key);
}
Items.prototype._set = function set(data) {
  const saved = stockSet.call(this, data);
  partitionOf(this, data).set(data._rid, this._data.get(data._rid));
  return saved;
};
Items.prototype.delete = function remove(idOrRid, partition) {
  const data = this._item("/id", idOrRid, partition).read();
  stockDelete.call(this, idOrRid, partition);
  if (data) partitionOf(this, data).delete(data._rid);
};
Items.prototype.query = function scoped(params, options) {
  const { partition, ...rest } = options;
  if (partition === undefined || !this._byPartition) return stockQuery.call(this, params, rest);
  const all = this._data;
  this._data = this._byPartition.get(JSON.stringify(partition)) || new Map();
  try {
    return stockQuery.call(this, params, rest);
  } finally {
    this._data = all;
  }
};
// The query handler as the stock one, but for handing the request's partition to the query.
const readItems = require(path.join(lib, "handler", "_read-items")).default;
const readJson = require(path.join(lib, "json")).default;
const trueHeader = require(path.join(lib, "true-header")).default;
const compile = require("@zeit/cosmosdb-query").default;
function partitionNamed(req) {
  if (trueHeader(req, "x-ms-documentdb-query-enablecrosspartition")) return undefined;
  try {
    const parsed = JSON.parse(req.headers["x-ms-documentdb-partitionkey"]);
    return Array.isArray(parsed) && parsed.length === 1 ? parsed[0] : undefined;
  } catch {
    return undefined;
  }
}
const queryDocuments = require(path.join(lib, "handler", "query-documents"));
queryDocuments.default = (account, req, res, { dbId, collId }) =>
  readItems(req, res, "Documents", async ({ continuation, maxItemCount }) => {
    const body = await readJson(req);
    if (!body.query) {
      res.statusCode = 400;
      return { message: "missing query" };
    }
    const collection = account.database(dbId).collection(collId);
    const partition = partitionNamed(req);
    if (partition === undefined && !trueHeader(req, "x-ms-documentdb-query-enablecrosspartition")) {
      const paths = ((collection.read() || {}).partitionKey || {}).paths || [];
      if (paths.length && !compile(body.query).containsPartitionKeys(paths)) {
        res.statusCode = 400;
        return { message: "missing partition keys" };
      }
    }
    try {
      return collection.documents.query(body, { continuation, maxItemCount, partition });
    } catch (err) {
      if (err.badRequest) {
        res.statusCode = 400;
        return { message: err.message };
      }
      throw err;
    }
  });
