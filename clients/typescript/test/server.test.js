// The client against a real Vault over HTTP: the Go test
// (typescript_test.go) serves one through internal/clienttest, which
// holds every request and answer to the OpenAPI document, and passes
// its address in the environment. Without it the suite is skipped.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  TokenVault, NotFoundError, InvalidRequestError, ApiError, UnauthenticatedError, UnprocessableError,
} from "../dist/index.js";

const url = process.env.TOKENVAULT_URL;
const skip = url ? false : "TOKENVAULT_URL is not set (go test ./clients/typescript sets it)";
const mgmtKey = process.env.TOKENVAULT_MANAGEMENT_KEY;

const mgmt = () => new TokenVault(url, { apiKey: mgmtKey });
const SSN = "078-05-1120";
const CARD = { number: "4242424242424242", expiration_month: 12, expiration_year: 2031 };
const PERMS = ["token:create", "token:read", "token:update", "token:delete", "token:search", "token:use"];

// A private application revealing every container, made through the
// client with the management key; returns a client holding its key.
async function backend(name, ...more) {
  const app = await mgmt().createApplication({
    name,
    type: "private",
    permissions: [...PERMS, ...more],
    rules: [{ priority: 1, container: "/", transform: "reveal", permissions: PERMS }],
  });
  assert.ok(app.key, "createApplication answers the key");
  return { app, client: new TokenVault(url, { apiKey: app.key }) };
}

test("tokenize with a private key and read the values back", { skip }, async () => {
  const { client } = await backend("ts tokenize");
  const token = await client.tokenize({ type: "token", data: SSN });
  assert.equal(typeof token.id, "string");
  const got = await client.getToken(token.id);
  assert.equal(got.data, SSN);
  assert.equal(got.type, "token");

  // A structure: each plain value becomes a token whose id takes its place.
  const ids = await client.tokenize({ ssn: SSN, card: { type: "card", data: CARD } });
  assert.equal(typeof ids.ssn, "string");
  assert.notEqual(ids.ssn, SSN);
  const card = await client.getToken(ids.card.id);
  assert.equal(card.data.number, CARD.number);

  const clear = await client.detokenize({ ssn: `{{ ${ids.ssn} }}`, number: `{{ ${ids.card.id} | json: '$.number' }}` });
  assert.deepEqual(clear, { ssn: SSN, number: CARD.number });
});

test("create, get, update and delete a token", { skip }, async () => {
  const { client } = await backend("ts crud");
  const created = await client.createToken({ type: "token", data: "crud-value", containers: ["/ts/crud/"], metadata: { customer: "42" } });
  assert.deepEqual(created.containers, ["/ts/crud/"]);
  const updated = await client.updateToken(created.id, { metadata: { customer: "43" } });
  assert.deepEqual(updated.metadata, { customer: "43" });
  assert.equal((await client.getToken(created.id)).metadata.customer, "43");
  assert.equal(await client.deleteToken(created.id), undefined);
  await assert.rejects(client.getToken(created.id), NotFoundError);
});

test("a create repeated with its Idempotency-Key is done once", { skip }, async () => {
  const { client } = await backend("ts idempotency");
  const options = { idempotencyKey: "ts-order-1" };
  const a = await client.createToken({ type: "token", data: "once" }, options);
  const b = await client.createToken({ type: "token", data: "once" }, options);
  assert.equal(a.id, b.id);
  const list = await client.listTokens({ type: "token" });
  assert.equal(list.data.filter((t) => t.data === "once").length, 1);
});

test("list and search tokens page by page", { skip }, async () => {
  const { client } = await backend("ts lists");
  const want = new Set();
  for (let i = 0; i < 5; i++) {
    const t = await client.createToken({
      type: "token", data: `list-${i}`, containers: ["/ts/list/"], search_indexes: ["{{ data }}"], metadata: { batch: "b1" },
    });
    want.add(t.id);
  }
  // A walk by cursor sees each token once.
  const seen = [];
  let start;
  for (let pages = 0; pages < 10; pages++) {
    const page = await client.listTokens({ container: "/ts/list/", size: 2, ...(start ? { start } : {}) });
    assert.equal(page.pagination.total_items, 5);
    assert.ok(page.data.length <= 2);
    seen.push(...page.data.map((t) => t.id));
    start = page.pagination.after;
    if (!start) break;
  }
  assert.deepEqual(new Set(seen), want);
  assert.equal(seen.length, 5);

  const byId = await client.listTokens({ id: [...want].slice(0, 2) });
  assert.equal(byId.data.length, 2);

  const hit = await client.searchTokens({ query: "data:list-3" });
  assert.equal(hit.data.length, 1);
  assert.equal(hit.data[0].data, "list-3");
  const first = await client.searchTokens({ query: "container:/ts/list/ AND metadata.batch:b1", size: 3 });
  assert.equal(first.data.length, 3);
  assert.equal(first.pagination.total_items, 5);
  const rest = await client.searchTokens({ query: "container:/ts/list/ AND metadata.batch:b1", size: 3, start: first.pagination.after });
  assert.equal(rest.data.length, 2);
});

test("applications: create, list, get, update, regenerate, delete", { skip }, async () => {
  const m = mgmt();
  const app = await m.createApplication({ name: "ts app", type: "private", permissions: ["token:read"] });
  const listed = await m.listApplications({ id: [app.id] });
  assert.deepEqual(listed.data.map((a) => a.name), ["ts app"]);
  assert.equal((await m.getApplication(app.id)).name, "ts app");
  const renamed = await m.updateApplication(app.id, { name: "ts app 2", permissions: ["token:read", "token:create"] });
  assert.equal(renamed.name, "ts app 2");
  assert.deepEqual([...renamed.permissions].sort(), ["token:create", "token:read"]);
  const regenerated = await m.regenerateApplicationKey(app.id);
  assert.notEqual(regenerated.key, app.key);
  // The old key no longer authenticates; the new one does (a 404, not a 401).
  await assert.rejects(m.getToken("no-such-token", { apiKey: app.key }), UnauthenticatedError);
  await assert.rejects(m.getToken("no-such-token", { apiKey: regenerated.key }), NotFoundError);
  await m.deleteApplication(app.id);
  await assert.rejects(m.getApplication(app.id), NotFoundError);
  const perms = await m.listPermissions({ application_type: "public" });
  assert.ok(perms.some((p) => p.type === "token-intent:create"));
});

test("errors are typed and carry the problem details", { skip }, async () => {
  const m = mgmt();
  const { client } = await backend("ts errors");
  const missing = await client.getToken("no-such-token").then(() => null, (e) => e);
  assert.ok(missing instanceof NotFoundError && missing instanceof ApiError);
  assert.equal(missing.status, 404);
  assert.equal(missing.kind, "not_found");
  assert.equal(missing.operation, "getToken");
  assert.equal(missing.problem.status, 404);
  assert.equal(typeof missing.title, "string");

  const invalid = await m.createApplication({ name: "ts bad", type: "public", permissions: ["token:read"] }).then(() => null, (e) => e);
  assert.ok(invalid instanceof InvalidRequestError, `got ${invalid}`);
  assert.equal(invalid.status, 400);
  assert.ok(invalid.fieldErrors["permissions[0]"]?.length > 0, JSON.stringify(invalid.fieldErrors));

  const badKey = "key_definitely-not-valid-0123456789";
  const unauth = await new TokenVault(url, { apiKey: badKey }).getTenant().then(() => null, (e) => e);
  assert.ok(unauth instanceof UnauthenticatedError);
  for (const e of [missing, invalid, unauth]) {
    const shown = `${e.message} ${e.stack} ${JSON.stringify(e)}`;
    assert.ok(!shown.includes(mgmtKey) && !shown.includes(badKey), `${e.name} shows a key`);
  }
});

test("a token intent made with a public key, converted with a private key", { skip }, async () => {
  const pub = await mgmt().createApplication({ name: "ts checkout", type: "public", permissions: ["token-intent:create"] });
  const browser = new TokenVault(url, { apiKey: pub.key });
  const intent = await browser.createTokenIntent({ type: "card", data: { ...CARD, cvc: "123" } });
  assert.equal(intent.card.last4, "4242");
  assert.equal(intent.data, undefined);

  const { client } = await backend("ts converter", "token-intent:read");
  assert.equal((await client.getTokenIntent(intent.id)).id, intent.id);
  const token = await client.createToken({ token_intent_id: intent.id });
  assert.equal(token.type, "card");
  const read = await client.getToken(token.id);
  assert.equal(read.data.number, CARD.number);
  assert.equal(read.data.cvc, undefined, "a converted card leaves the cvc out");
  await assert.rejects(client.getTokenIntent(intent.id), NotFoundError);
});

test("a session made with a public key, authorized by a private key, tokenizes", { skip }, async () => {
  const pub = await mgmt().createApplication({ name: "ts sessions", type: "public", permissions: ["token:create"] });
  const session = await new TokenVault(url, { apiKey: pub.key }).createSession();
  assert.ok(session.session_key && session.nonce);
  const browser = new TokenVault(url, { apiKey: session.session_key });
  // No access until authorized.
  await assert.rejects(browser.tokenize({ type: "token", data: SSN }), ApiError);

  const { client } = await backend("ts authorizer");
  await client.authorizeSession({
    nonce: session.nonce,
    rules: [{ priority: 1, conditions: [{ attribute: "container", operator: "starts_with", value: "/general/" }], transform: "redact", permissions: ["token:create"] }],
  });
  const token = await browser.tokenize({ type: "token", data: SSN });
  assert.equal((await client.getToken(token.id)).data, SSN);
});

test("a proxy detokenizes what it forwards", { skip }, async () => {
  const { app, client } = await backend("ts proxy");
  const token = await client.tokenize({ type: "token", data: SSN });
  const proxy = await mgmt().createProxy({ name: "ts echo", destination_url: process.env.TOKENVAULT_ECHO_URL, application: { id: app.id } });
  const answer = await client.invokeProxyPost({ proxyKey: proxy.key, body: { ssn: `{{ ${token.id} }}` } });
  assert.equal(answer.status, 200);
  assert.deepEqual(answer.body, { ssn: SSN });
  const pathed = await client.invokeProxyPathPost("orders/1", { proxyKey: proxy.key, body: { ok: true } });
  assert.deepEqual(pathed.body, { ok: true });
  // The proxy's own failure is an error of the client, with its problem.
  const refused = await client.invokeProxyPost({ proxyKey: "not-the-proxy-key", body: {} }).then(() => null, (e) => e);
  assert.ok(refused instanceof UnauthenticatedError, `got ${refused}`);
  assert.equal(refused.problem.proxy_error, true);
  await mgmt().deleteProxy(proxy.id);
});

test("webhooks: create, list, rotate the secret, delete", { skip }, async () => {
  const m = mgmt();
  const types = await m.listWebhookEventTypes();
  assert.ok(types.includes("token.created"));
  const hook = await m.createWebhook({ name: "ts hook", url: "https://hooks.example.com/vault", events: ["token.created"], status: "disabled" });
  assert.ok(hook.secret);
  assert.ok((await m.listWebhooks()).data.some((w) => w.id === hook.id));
  const rotated = await m.rotateWebhookSecret(hook.id);
  assert.notEqual(rotated.secret, hook.secret);
  await m.deleteWebhook(hook.id);
  await assert.rejects(m.getWebhook(hook.id), NotFoundError);
});

test("operator routes take the operator key", { skip }, async () => {
  const op = new TokenVault(url, { apiKey: process.env.TOKENVAULT_OPERATOR_KEY });
  const tenants = await op.operatorListTenants();
  assert.ok(tenants.data.some((t) => t.name === "Acme"), JSON.stringify(tenants.data.map((t) => t.name)));
  // The suite's server runs on a memory store, which has no snapshot to give.
  await assert.rejects(op.operatorBackup(), UnprocessableError);
  // The operator key is no tenant key.
  await assert.rejects(op.getTenant(), UnauthenticatedError);
  const root = await new TokenVault(url).getRoot();
  assert.equal(typeof root.name, "string");
});

test("a rule with purposes: SVC-PURPOSE from the client's or the call's purpose", { skip }, async () => {
  const tenant = await mgmt().setPurposes({
    purposes: [{ name: "fraud-review", description: "Reviewing a payment flagged as fraud" }],
  });
  assert.deepEqual(tenant.purposes.map((p) => p.name), ["fraud-review"]);
  const app = await mgmt().createApplication({
    name: "ts purposes",
    type: "private",
    permissions: ["token:create"],
    rules: [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:read"], purposes: ["fraud-review"] }],
  });
  const client = new TokenVault(url, { apiKey: app.key });
  const token = await client.createToken({ type: "token", data: SSN });
  await assert.rejects(client.getToken(token.id), (e) => e instanceof InvalidRequestError && "purpose" in (e.problem.errors ?? {}));
  const got = await client.getToken(token.id, { purpose: "fraud-review" });
  assert.equal(got.data, SSN);
  const reviewer = new TokenVault(url, { apiKey: app.key, purpose: "fraud-review" });
  assert.equal((await reviewer.getToken(token.id)).data, SSN);
  const access = await mgmt().tokenAccess(token.id);
  assert.equal(access.data[0].purpose, "fraud-review");
});

test("an export answers the age file's bytes", { skip }, async () => {
  // An age public key whose private key nobody kept.
  const recipient = "age169saay7hadce9xfcydjn3l4h3ap6p5a69nc2zjera73vmv9n7fpsxty04l";
  const file = await mgmt().exportTokens({ recipient });
  assert.ok(file instanceof Uint8Array);
  assert.equal(new TextDecoder().decode(file.slice(0, 21)), "age-encryption.org/v1");
  await assert.rejects(mgmt().exportTokens({ recipient: "age1nope" }), InvalidRequestError);
});
