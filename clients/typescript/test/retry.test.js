// Retries, timeouts and network errors, against a fake server of the
// suite's own on a port the system chose: each test scripts the answers.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import {
  TokenVault, RateLimitedError, UnavailableError, NetworkError, TimeoutError, ConflictError, parseRetryAfter,
} from "../dist/index.js";

const KEY = "key_secret-of-the-suite-0123456789";
const problem = (status, title) => JSON.stringify({ type: "about:blank", title, status, detail: `${title} (scripted)` });

// serve answers the scripted responses in turn, recording each request
// (method, url, headers, body, arrival time); it closes when t ends.
async function serve(t, script) {
  const requests = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      requests.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString(), at: Date.now() });
      const step = script[Math.min(requests.length - 1, script.length - 1)];
      if (step.hang) return; // never answers
      res.writeHead(step.status, step.headers ?? { "Content-Type": step.status < 300 ? "application/json" : "application/problem+json" });
      res.end(step.body ?? "");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
  return { url: `http://127.0.0.1:${server.address().port}`, requests };
}

const token = JSON.stringify({ id: "tok_1", tenant_id: "t", type: "token", containers: ["/general/high/"], created_at: "2026-01-01T00:00:00Z" });

test("a 429 with Retry-After in seconds is retried after it", async (t) => {
  const s = await serve(t, [
    { status: 429, headers: { "Content-Type": "application/problem+json", "Retry-After": "1" }, body: problem(429, "Too Many Requests") },
    { status: 200, body: token },
  ]);
  const c = new TokenVault(s.url, { apiKey: KEY });
  const got = await c.getToken("tok_1");
  assert.equal(got.id, "tok_1");
  assert.equal(s.requests.length, 2);
  // Never earlier than asked (a lower bound only: a loaded machine is slower).
  assert.ok(s.requests[1].at - s.requests[0].at >= 900, `retried after ${s.requests[1].at - s.requests[0].at} ms`);
  assert.equal(s.requests[1].headers["svc-api-key"], KEY);
});

test("a 429 with Retry-After as an HTTP date is retried", async (t) => {
  const s = await serve(t, [
    { status: 429, headers: { "Content-Type": "application/problem+json", "Retry-After": new Date(Date.now() + 1000).toUTCString() }, body: problem(429, "Too Many Requests") },
    { status: 200, body: token },
  ]);
  const got = await new TokenVault(s.url, { apiKey: KEY }).getToken("tok_1");
  assert.equal(got.id, "tok_1");
  assert.equal(s.requests.length, 2);
});

test("a 503 twice then a 201: a tokenize retried under one Idempotency-Key", async (t) => {
  const s = await serve(t, [
    { status: 503, body: problem(503, "Service Unavailable") },
    { status: 503, body: problem(503, "Service Unavailable") },
    { status: 201, body: token },
  ]);
  const c = new TokenVault(s.url, { apiKey: KEY, retryDelayMs: 20 });
  const got = await c.tokenize({ type: "token", data: "secret-value" });
  assert.equal(got.id, "tok_1");
  assert.equal(s.requests.length, 3);
  const keys = s.requests.map((r) => r.headers["idempotency-key"]);
  assert.ok(keys[0], "the first attempt carries an Idempotency-Key");
  assert.deepEqual(keys, [keys[0], keys[0], keys[0]]);
  for (const r of s.requests) {
    assert.equal(r.method, "POST");
    assert.equal(r.headers["content-type"], "application/json");
    assert.deepEqual(JSON.parse(r.body), { type: "token", data: "secret-value" });
  }
});

test("the caller's own Idempotency-Key is sent; operations without one send none", async (t) => {
  const s = await serve(t, [{ status: 201, body: token }]);
  const c = new TokenVault(s.url, { apiKey: KEY });
  await c.createToken({ type: "token", data: "x" }, { idempotencyKey: "order-77" });
  await c.detokenize({ a: "{{ tok_1 }}" });
  await c.createToken({ type: "token", data: "x" }, { idempotencyKey: false });
  assert.equal(s.requests[0].headers["idempotency-key"], "order-77");
  assert.equal(s.requests[1].headers["idempotency-key"], undefined);
  assert.equal(s.requests[2].headers["idempotency-key"], undefined);
});

test("retries exhausted throw the typed error, without the key or the body", async (t) => {
  const s = await serve(t, [
    { status: 429, headers: { "Content-Type": "application/problem+json", "Retry-After": "0" }, body: problem(429, "Too Many Requests") },
  ]);
  const c = new TokenVault(s.url, { apiKey: KEY, maxRetries: 2 });
  const err = await c.tokenize({ type: "token", data: "secret-value" }).then(() => null, (e) => e);
  assert.ok(err instanceof RateLimitedError, `got ${err}`);
  assert.equal(err.status, 429);
  assert.equal(err.kind, "rate_limited");
  assert.equal(err.attempts, 3);
  assert.equal(err.retryAfterMs, 0);
  assert.equal(err.detail, "Too Many Requests (scripted)");
  assert.equal(s.requests.length, 3);
  const shown = `${err.message} ${err.stack} ${JSON.stringify(err)}`;
  assert.ok(!shown.includes(KEY), "the error shows the API key");
  assert.ok(!shown.includes("secret-value"), "the error shows the request body");
});

test("no retry when Retry-After is past the call's timeout", async (t) => {
  const s = await serve(t, [
    { status: 503, headers: { "Content-Type": "application/problem+json", "Retry-After": "120" }, body: problem(503, "Service Unavailable") },
  ]);
  const c = new TokenVault(s.url, { apiKey: KEY, timeoutMs: 10_000 });
  const started = Date.now();
  const err = await c.getTenant().then(() => null, (e) => e);
  assert.ok(err instanceof UnavailableError, `got ${err}`);
  assert.equal(err.retryAfterMs, 120_000);
  assert.equal(s.requests.length, 1);
  assert.ok(Date.now() - started < 10_000, "waited although the wait would pass the timeout");
});

test("maxRetries 0 and errors other than 429 and 503 are not retried", async (t) => {
  const s = await serve(t, [{ status: 409, body: problem(409, "Conflict") }]);
  const c = new TokenVault(s.url, { apiKey: KEY });
  await assert.rejects(c.createToken({ type: "token", data: "x" }), ConflictError);
  assert.equal(s.requests.length, 1);
  const s2 = await serve(t, [{ status: 429, body: problem(429, "Too Many Requests") }]);
  await assert.rejects(new TokenVault(s2.url, { maxRetries: 0 }).getTenant(), RateLimitedError);
  assert.equal(s2.requests.length, 1);
});

test("a proxy invocation is never retried: its status is the destination's", async (t) => {
  const s = await serve(t, [{ status: 503, headers: { "Content-Type": "text/plain" }, body: "down" }]);
  const got = await new TokenVault(s.url).invokeProxyPost({ proxyKey: "pk_1", body: "raw", contentType: "text/plain" });
  assert.equal(got.status, 503);
  assert.equal(got.body, "down");
  assert.equal(s.requests.length, 1);
  assert.equal(s.requests[0].headers["svc-proxy-key"], "pk_1");
  assert.equal(s.requests[0].headers["svc-api-key"], undefined);
});

test("an answer that is no problem document still throws the status's error", async (t) => {
  const s = await serve(t, [{ status: 503, headers: { "Content-Type": "text/html" }, body: "<h1>gateway</h1>" }]);
  const err = await new TokenVault(s.url, { maxRetries: 0 }).getTenant().then(() => null, (e) => e);
  assert.ok(err instanceof UnavailableError);
  assert.equal(err.status, 503);
});

test("no answer within the timeout is a TimeoutError; no server a NetworkError", async (t) => {
  const s = await serve(t, [{ hang: true }]);
  const err = await new TokenVault(s.url, { apiKey: KEY, timeoutMs: 1000 }).getTenant().then(() => null, (e) => e);
  assert.ok(err instanceof TimeoutError && err instanceof NetworkError, `got ${err}`);

  // A port that was just free: nothing listens there.
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = probe.address().port;
  await new Promise((resolve) => probe.close(resolve));
  const down = new TokenVault(`http://127.0.0.1:${port}`, { apiKey: KEY });
  const e2 = await down.getTenant().then(() => null, (e) => e);
  assert.ok(e2 instanceof NetworkError && !(e2 instanceof TimeoutError), `got ${e2}`);
  assert.match(e2.message, /ECONNREFUSED/);
  assert.ok(!`${e2.message} ${e2.stack}`.includes(KEY));
});

test("Retry-After parses seconds and HTTP dates", () => {
  const now = Date.parse("2026-11-29T12:00:00Z");
  assert.equal(parseRetryAfter("3", now), 3000);
  assert.equal(parseRetryAfter("Sun, 29 Nov 2026 12:00:05 GMT", now), 5000);
  assert.equal(parseRetryAfter("Sun, 29 Nov 2026 11:00:00 GMT", now), 0);
  assert.equal(parseRetryAfter("soon", now), undefined);
  assert.equal(parseRetryAfter(null, now), undefined);
});

test("query parameters repeat for arrays; path parameters are escaped", async (t) => {
  const s = await serve(t, [{ status: 200, body: JSON.stringify({ pagination: { total_items: 0, page_number: 1, page_size: 20, total_pages: 0 }, data: [] }) }]);
  const c = new TokenVault(s.url + "/", { apiKey: KEY });
  await c.listTokens({ id: ["a", "b"], container: "/pci/", size: 5 });
  await c.getToken("a/b c").catch(() => {});
  assert.equal(s.requests[0].url, "/tokens?id=a&id=b&container=%2Fpci%2F&size=5");
  assert.equal(s.requests[1].url, "/tokens/a%2Fb%20c");
});

test("a call the caller cancels stops with a NetworkError, even while it waits to retry", async (t) => {
  const s = await serve(t, [
    { status: 429, headers: { "Content-Type": "application/problem+json", "Retry-After": "60" }, body: problem(429, "Too Many Requests") },
  ]);
  const controller = new AbortController();
  const c = new TokenVault(s.url, { apiKey: KEY, timeoutMs: 120_000 });
  const pending = c.getTenant({ signal: controller.signal }).then(() => null, (e) => e);
  // Cancel once the first answer came: the client then waits its minute.
  const deadline = Date.now() + 30_000;
  while (s.requests.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  controller.abort();
  const err = await pending;
  assert.ok(err instanceof NetworkError && !(err instanceof TimeoutError), `got ${err}`);
  assert.equal(s.requests.length, 1);
});

test("a binary answer comes as bytes; a 204 as undefined", async (t) => {
  const bytes = Buffer.from([0, 1, 2, 255]);
  const s = await serve(t, [{ status: 200, headers: { "Content-Type": "application/octet-stream" }, body: bytes }]);
  const got = await new TokenVault(s.url, { apiKey: KEY }).operatorBackup();
  assert.ok(got instanceof Uint8Array);
  assert.deepEqual([...got], [0, 1, 2, 255]);
  const s2 = await serve(t, [{ status: 204, headers: {} }]);
  assert.equal(await new TokenVault(s2.url, { apiKey: KEY }).deleteToken("tok_1"), undefined);
  assert.equal(s2.requests[0].method, "DELETE");
});

test("the fetch option replaces the transport", async () => {
  const calls = [];
  const fake = async (url, init) => {
    calls.push({ url, method: init.method, key: init.headers.get("SVC-API-KEY"), body: init.body });
    return new Response(JSON.stringify({ data: "078-05-1120" }), { status: 200, headers: { "Content-Type": "application/json" } });
  };
  const c = new TokenVault("https://vault.example.com/", { apiKey: KEY, fetch: fake });
  assert.deepEqual(await c.detokenize({ data: "{{ tok_1 }}" }), { data: "078-05-1120" });
  assert.deepEqual(await c.getRoot(), { data: "078-05-1120" });
  assert.deepEqual(calls.map((x) => [x.url, x.method, x.key]), [
    ["https://vault.example.com/detokenize", "POST", KEY],
    ["https://vault.example.com/", "GET", null], // no key where the route takes none
  ]);
  assert.equal(calls[0].body, JSON.stringify({ data: "{{ tok_1 }}" }));
});
