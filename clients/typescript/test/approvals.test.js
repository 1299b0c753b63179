// Approvals: a call the tenant's approval policy holds throws an
// ApprovalRequiredError (its 202's pending change), and a held
// detokenization is made once with CallOptions.approvalId. The first
// tests run against a scripted server of the suite's own; those against a
// real Vault (TOKENVAULT_URL, set by typescript_test.go) each make a
// tenant of their own, so the policy holds no other test's calls.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { inspect } from "node:util";
import {
  TokenVault, ApprovalRequiredError, ApiError, ConflictError, NetworkError, PermissionDeniedError,
  TokenVaultError, UnauthenticatedError, operations,
} from "../dist/index.js";

const KEY = "key_secret-of-the-suite-0123456789";
const HELD_KEY = "key_the-key-once-approved-0123456789";

const change = (operation) => ({
  id: "chg_1", tenant_id: "t", operation, target: "app_1", before: null, after: { name: "ops" },
  status: "pending", required: 1, approvals: [], requested_by: "app_0", requested_by_type: "application",
  requested_at: "2026-01-01T00:00:00Z", expires_at: "2026-01-02T00:00:00Z",
});

// serve answers each request with the next scripted answer (the last
// repeats), recording the requests; it closes when t ends.
async function serve(t, script) {
  const requests = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      requests.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() });
      const step = script[Math.min(requests.length - 1, script.length - 1)];
      res.writeHead(step.status, { "Content-Type": step.type ?? "application/json" });
      res.end(step.body ?? "");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
  return { url: `http://127.0.0.1:${server.address().port}`, requests };
}

test("the operation table marks the operations a policy can hold and those taking SVC-APPROVAL-ID", () => {
  const held = Object.keys(operations).filter((id) => operations[id].approval).sort();
  assert.deepEqual(held, ["createApplication", "deleteOwnTenant", "detokenize", "exportTokens", "regenerateApplicationKey", "setApprovalPolicy", "updateApplication"]);
  const withId = Object.keys(operations).filter((id) => operations[id].approvalId).sort();
  assert.deepEqual(withId, ["deleteOwnTenant", "detokenize", "exportTokens"]);
  // invokeReactor's 202 is its own (an accepted asynchronous call), not a pending change.
  assert.equal(operations.invokeReactor.approval, false);
});

test("a 202 of a held operation throws ApprovalRequiredError, once, with the change and the key", async (t) => {
  const s = await serve(t, [{ status: 202, body: JSON.stringify({ ...change("application.create_management"), key: HELD_KEY }) }]);
  const c = new TokenVault(s.url, { apiKey: KEY, maxRetries: 3, retryDelayMs: 10 });
  const err = await c.createApplication({ name: "ops", type: "management" }).then(() => null, (e) => e);
  assert.ok(err instanceof ApprovalRequiredError, `got ${err}`);
  assert.ok(err instanceof TokenVaultError);
  assert.ok(!(err instanceof ApiError), "a held call is no failure");
  assert.equal(err.status, 202);
  assert.equal(err.operation, "createApplication");
  assert.equal(err.change.id, "chg_1");
  assert.equal(err.change.operation, "application.create_management");
  assert.equal(err.change.key, undefined, "the key is the error's, not the change's");
  assert.equal(err.key, HELD_KEY);
  assert.equal(s.requests.length, 1, "never retried");
  // The key is there for the caller who asks for it, never in what is logged.
  const shown = `${err.message} ${err.stack} ${JSON.stringify(err)} ${inspect(err)} ${JSON.stringify(err.change)}`;
  assert.ok(!shown.includes(HELD_KEY) && !shown.includes(KEY), shown);
  assert.ok(err.message.includes("chg_1"));
});

test("a held detokenization carries no key; a 202 that is no pending change is a NetworkError", async (t) => {
  const s = await serve(t, [
    { status: 202, body: JSON.stringify(change("token.detokenize_bulk")) },
    { status: 202, body: "accepted", type: "text/plain" },
  ]);
  const c = new TokenVault(s.url, { apiKey: KEY });
  const err = await c.detokenize({ a: "{{ tok_1 }}" }).then(() => null, (e) => e);
  assert.ok(err instanceof ApprovalRequiredError, `got ${err}`);
  assert.equal(err.key, undefined);
  assert.ok(!("key" in err));
  await assert.rejects(c.detokenize({ a: "{{ tok_1 }}" }), NetworkError);
});

test("invokeReactor's own 202 is its answer, not an ApprovalRequiredError", async (t) => {
  const s = await serve(t, [{ status: 202, body: JSON.stringify({ id: "react_1" }) }]);
  const got = await new TokenVault(s.url, { apiKey: KEY }).invokeReactor("r1", { args: {} });
  assert.deepEqual(got, { id: "react_1" });
});

test("approvalId is sent as SVC-APPROVAL-ID by the operations that take it, refused by the others", async (t) => {
  const s = await serve(t, [{ status: 200, body: JSON.stringify({ a: "one" }) }, { status: 204 }]);
  const c = new TokenVault(s.url, { apiKey: KEY });
  assert.deepEqual(await c.detokenize({ a: "{{ tok_1 }}" }, { approvalId: "chg_1" }), { a: "one" });
  assert.equal(s.requests[0].headers["svc-approval-id"], "chg_1");
  assert.equal(await c.deleteOwnTenant({ approvalId: "chg_2" }), undefined);
  assert.equal(s.requests[1].headers["svc-approval-id"], "chg_2");
  assert.equal(s.requests[1].method, "DELETE");

  await assert.rejects(c.createToken({ type: "token", data: "x" }, { approvalId: "chg_1" }), TypeError);
  await assert.rejects(c.detokenize({}, { approvalId: "" }), TypeError);
  await c.detokenize({ a: "{{ tok_1 }}" });
  assert.equal(s.requests.length, 3, "a refused option sends nothing");
  assert.equal(s.requests[2].headers["svc-approval-id"], undefined, "no approval id unless asked");
});

// The real server's tests.

const url = process.env.TOKENVAULT_URL;
const skip = url ? false : "TOKENVAULT_URL is not set (go test ./clients/typescript sets it)";

// approvalTenant makes a tenant of its own with the operator key, a
// second management application as the approver, and a policy of 1
// approver holding operations; returns clients of the requester (the
// tenant's first management key) and of the approver.
async function approvalTenant(name, policy) {
  const op = new TokenVault(url, { apiKey: process.env.TOKENVAULT_OPERATOR_KEY });
  const boot = await op.operatorCreateTenant({ name });
  const requester = new TokenVault(url, { apiKey: boot.application.key });
  const app = await requester.createApplication({ name: "approver", type: "management", permissions: ["tenant:read"] });
  const approver = new TokenVault(url, { apiKey: app.key });
  const set = await requester.setApprovalPolicy({ required: 1, approvers: [app.id], ttl_seconds: 3600, ...policy });
  assert.equal(set.required, 1);
  return { requester, approver };
}

test("a held creation of a management application: the error, the approval, then the key works", { skip }, async () => {
  const { requester, approver } = await approvalTenant("ts approvals create", { operations: ["application.create_management"] });
  // A private application is not held.
  await requester.createApplication({ name: "not held", type: "private", permissions: ["token:read"] });

  const err = await requester.createApplication({ name: "ops", type: "management", permissions: ["tenant:read"] }).then(() => null, (e) => e);
  assert.ok(err instanceof ApprovalRequiredError, `got ${err}`);
  assert.equal(err.change.status, "pending");
  assert.equal(err.change.operation, "application.create_management");
  assert.equal(typeof err.key, "string");
  assert.ok(err.key.length > 0);
  assert.ok(!JSON.stringify(err).includes(err.key));
  const held = new TokenVault(url, { apiKey: err.key });
  await assert.rejects(held.getTenant(), UnauthenticatedError, "the key works only once the change is applied");

  const pending = await approver.listApprovals({ status: "pending" });
  assert.deepEqual(pending.data.map((c) => c.id), [err.change.id]);
  await assert.rejects(requester.approveChange(err.change.id), PermissionDeniedError, "the requester cannot approve its own");
  const applied = await approver.approveChange(err.change.id);
  assert.equal(applied.status, "applied");

  // The key is the new application's: it reads the tenant (tenant:read, what it was given).
  assert.equal((await held.getTenant()).name, "ts approvals create");
  const created = await requester.listApplications();
  assert.ok(created.data.some((a) => a.name === "ops" && a.type === "management"), JSON.stringify(created.data.map((a) => a.name)));
});

test("a held detokenization: approved, then made once with approvalId", { skip }, async () => {
  const { requester, approver } = await approvalTenant("ts approvals detokenize", {
    operations: ["token.detokenize_bulk"], detokenize_over: 1,
  });
  const app = await requester.createApplication({
    name: "reader", type: "private", permissions: ["token:create", "token:read"],
    rules: [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:read"] }],
  });
  const reader = new TokenVault(url, { apiKey: app.key });
  const a = await reader.createToken({ type: "token", data: "first" });
  const b = await reader.createToken({ type: "token", data: "second" });
  // One token is under the policy's bound: not held.
  assert.deepEqual(await reader.detokenize({ a: `{{ ${a.id} }}` }), { a: "first" });

  const body = { a: `{{ ${a.id} }}`, b: `{{ ${b.id} }}` };
  const err = await reader.detokenize(body).then(() => null, (e) => e);
  assert.ok(err instanceof ApprovalRequiredError, `got ${err}`);
  assert.equal(err.change.operation, "token.detokenize_bulk");
  assert.equal(err.key, undefined);
  assert.ok(!JSON.stringify(err.change).includes("first"), "the change holds no data");
  // Not before its approval.
  await assert.rejects(reader.detokenize(body, { approvalId: err.change.id }), ApiError);

  assert.equal((await approver.approveChange(err.change.id)).status, "applied");
  // Another body is refused; the approved one is made, once.
  await assert.rejects(reader.detokenize({ a: `{{ ${a.id} }}`, b: `{{ ${a.id} }}`, c: `{{ ${b.id} }}` }, { approvalId: err.change.id }), ApiError);
  assert.deepEqual(await reader.detokenize(body, { approvalId: err.change.id }), { a: "first", b: "second" });
  await assert.rejects(reader.detokenize(body, { approvalId: err.change.id }), ConflictError);
  const used = await approver.getApproval(err.change.id);
  assert.equal(typeof used.used_at, "string");
});
