// The OpenAPI document is the client's single source: every operation
// has a method, every method an operation, and the table that joins
// them says what the document says.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { TokenVault, operations } from "../dist/index.js";

const docPath = process.env.TOKENVAULT_OPENAPI ?? new URL("../../../httpapi/openapi.json", import.meta.url);
const doc = JSON.parse(readFileSync(docPath, "utf8"));

function documented() {
  const ops = new Map();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of ["get", "post", "put", "patch", "delete"]) {
      if (item[method]) ops.set(item[method].operationId, { http: method.toUpperCase(), path });
    }
  }
  return ops;
}

// The client's methods by reflection: every function on the prototype
// chain up to Object, but the constructor and the transport's own.
function methods() {
  const names = new Set();
  for (let p = TokenVault.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const name of Object.getOwnPropertyNames(p)) {
      if (name !== "constructor" && name !== "call" && typeof p[name] === "function") names.add(name);
    }
  }
  return names;
}

test("every operation of the document has a method", () => {
  const ops = documented();
  assert.ok(ops.size >= 80, `the document has ${ops.size} operations`);
  const have = methods();
  for (const [id, { http, path }] of ops) {
    const entry = operations[id];
    assert.ok(entry, `operation ${id} (${http} ${path}) is not in the client's table`);
    assert.equal(entry.http, http, `${id}: method`);
    assert.equal(entry.path, path, `${id}: path`);
    assert.ok(have.has(entry.method), `operation ${id} maps to ${entry.method}, which the client lacks`);
  }
});

test("every method of the client maps to an operation of the document", () => {
  const ops = documented();
  const mapped = new Set(Object.values(operations).map((e) => e.method));
  for (const name of methods()) {
    assert.ok(mapped.has(name), `method ${name} maps to no operationId in the client's table`);
  }
  for (const [id, entry] of Object.entries(operations)) {
    assert.ok(ops.has(id), `the table's ${id} (method ${entry.method}) is no operation of the document`);
  }
});

test("each method calls its own operation", async () => {
  // A transport that records the operation each method asks for.
  const seen = [];
  class Recorder extends TokenVault {
    call(op) {
      seen.push(op);
      return Promise.resolve(undefined);
    }
  }
  const c = new Recorder("http://127.0.0.1:9");
  for (const [id, entry] of Object.entries(operations)) {
    const args = entry.pathParams.map(() => "x");
    seen.length = 0;
    await c[entry.method](...args, {}, {});
    assert.deepEqual(seen, [id], `${entry.method} called ${seen}`);
  }
});
