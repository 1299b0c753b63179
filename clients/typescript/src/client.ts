// The client: the transport under the generated methods (fetch, keys,
// timeouts, retries, errors).

import { ApprovalRequiredError, NetworkError, ProblemDetails, TimeoutError, apiError } from "./errors.js";
import { Operation, OperationId, Operations, PendingChange, operations } from "./generated.js";
import type { CallOptions, CallRequest, ProxyCall, ProxyResponse } from "./transport.js";

/** Options of a client; every field may be left out. */
export interface ClientOptions {
  /** The key of every call that names none (CallOptions.apiKey). */
  apiKey?: string;
  /** The purpose of access of every call that names none (CallOptions.purpose). */
  purpose?: string;
  /**
   * A call's time limit in milliseconds, retries included. Default 180000,
   * as the Go and Python clients: longer than the server's own bound on
   * writing an answer (2 minutes, room for a proxy whose destination takes
   * up to 60 s), so that every answer the server gives arrives.
   */
  timeoutMs?: number;
  /** How many times a 429 or a 503 is retried. Default 2; 0 never retries. */
  maxRetries?: number;
  /**
   * The first retry's delay in milliseconds when the server sends no
   * Retry-After; it doubles each retry, with jitter. Default 500.
   */
  retryDelayMs?: number;
  /** The fetch to use (tests, instrumentation). Default globalThis.fetch. */
  fetch?: typeof fetch;
  /** Draws the jitter, in [0, 1). Default Math.random. */
  random?: () => number;
}

/**
 * A client of the Token Vault REST API: one method per operation of its
 * OpenAPI document, named by its operationId. Safe to share between
 * concurrent calls; it holds no state but its options.
 *
 * Every method throws an ApiError subclass for a non-2xx answer
 * (NotFoundError, InvalidRequestError with fieldErrors, ...), a
 * NetworkError when no answer came, and a TimeoutError past its timeout.
 * An operation the tenant's approval policy can hold throws an
 * ApprovalRequiredError for its 202: the pending change, never retried.
 * A 429 or a 503 is retried, up to maxRetries, with exponential backoff
 * and jitter or after the Retry-After the server sent, never past the
 * timeout; the creates carry an Idempotency-Key so a retry is never done
 * twice. Proxy invocations are never retried: their status is the
 * destination's.
 */
export class TokenVault extends Operations {
  readonly baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly #purpose: string | undefined;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #retryDelayMs: number;
  readonly #fetch: typeof fetch;
  readonly #random: () => number;

  /** baseUrl is the API's root, such as https://vault.example.com. */
  constructor(baseUrl: string, options: ClientOptions = {}) {
    super();
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.#apiKey = options.apiKey;
    this.#purpose = options.purpose;
    this.#timeoutMs = options.timeoutMs ?? 180_000;
    this.#maxRetries = options.maxRetries ?? 2;
    this.#retryDelayMs = options.retryDelayMs ?? 500;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#random = options.random ?? Math.random;
  }

  /** Sends the operation op, retrying a 429 or 503 as the options say. */
  protected async call(id: OperationId, request: CallRequest, options: CallOptions = {}): Promise<unknown> {
    const op: Operation = operations[id];
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const maxRetries = op.auth === "proxy" ? 0 : options.maxRetries ?? this.#maxRetries;
    const deadline = Date.now() + timeoutMs;
    const url = this.#url(op, request);
    const headers = this.#headers(op, request, options, maxRetries);
    const body = encodeBody(op, request);

    for (let attempt = 1; ; attempt++) {
      const response = await this.#send(id, op, url, headers, body, deadline, options.signal);
      if (op.approval && response.status === 202) {
        throw approvalRequired(id, response);
      }
      const ok = response.status >= 200 && response.status < 300;
      if (ok || (op.auth === "proxy" && !isProxyFailure(response))) {
        return decode(id, op, response);
      }
      const retryAfterMs = parseRetryAfter(response.headers.get("Retry-After"));
      const error = apiError(id, problemOf(response), attempt, retryAfterMs);
      if (attempt > maxRetries || (error.status !== 429 && error.status !== 503)) {
        throw error;
      }
      const delay = retryAfterMs ?? this.#backoff(attempt);
      if (Date.now() + delay >= deadline) {
        throw error;
      }
      await sleep(delay, options.signal);
    }
  }

  #url(op: Operation, request: CallRequest): string {
    let path = op.path;
    for (const name of op.pathParams) {
      const value = request.path?.[name];
      if (value === undefined || value === "") {
        throw new TypeError(`${op.method}: the path parameter ${name} is empty`);
      }
      // A proxy invocation's path parameter is the destination's path: its slashes stay.
      const encoded = op.auth === "proxy" ? value.split("/").map(encodeURIComponent).join("/") : encodeURIComponent(value);
      path = path.replace(`{${name}}`, encoded);
    }
    const params = new URLSearchParams();
    const query = request.proxied?.query ?? request.query ?? {};
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined || value === null) continue;
      for (const v of Array.isArray(value) ? value : [value]) {
        params.append(name, String(v));
      }
    }
    const qs = params.toString();
    return this.baseUrl + path + (qs ? `?${qs}` : "");
  }

  #headers(op: Operation, request: CallRequest, options: CallOptions, maxRetries: number): Headers {
    const headers = new Headers();
    headers.set("Accept", "application/json, application/problem+json");
    const proxied = request.proxied;
    if (proxied) {
      for (const [name, value] of Object.entries(proxied.headers ?? {})) headers.set(name, value);
      headers.set("SVC-PROXY-KEY", proxied.proxyKey);
      headers.delete("Accept");
    }
    const key = options.apiKey ?? this.#apiKey;
    if (op.auth !== "none" && key !== undefined && key !== "") {
      headers.set("SVC-API-KEY", key);
    }
    if (options.approvalId !== undefined) {
      if (!op.approvalId) {
        throw new TypeError(`${op.method} takes no approval id (only operations with an SVC-APPROVAL-ID header do)`);
      }
      if (options.approvalId === "") {
        throw new TypeError(`${op.method}: the approval id is empty`);
      }
      headers.set("SVC-APPROVAL-ID", options.approvalId);
    }
    const purpose = options.purpose ?? this.#purpose;
    if (purpose !== undefined && purpose !== "") {
      headers.set("SVC-PURPOSE", purpose);
    }
    if (op.idempotent) {
      let ik = options.idempotencyKey;
      if (ik === undefined && maxRetries > 0) ik = randomKey();
      if (ik) headers.set("Idempotency-Key", ik);
    }
    if (op.body !== null && request.body !== undefined) {
      headers.set("Content-Type", op.body);
    }
    if (proxied && proxied.body !== undefined) {
      const plain = typeof proxied.body === "string" || proxied.body instanceof Uint8Array;
      headers.set("Content-Type", proxied.contentType ?? (plain ? "application/octet-stream" : "application/json"));
    }
    return headers;
  }

  // The delay before retry number attempt without Retry-After: the base
  // delay doubled each time, drawn in its upper half so that clients
  // refused together do not come back together.
  #backoff(attempt: number): number {
    const d = this.#retryDelayMs * 2 ** (attempt - 1);
    return Math.round(d / 2 + (d / 2) * this.#random());
  }

  async #send(id: string, op: Operation, url: string, headers: Headers, body: BodyInit | undefined,
    deadline: number, signal: AbortSignal | undefined): Promise<Answer> {
    if (signal?.aborted) throw new NetworkError(id, `${id}: cancelled`, { cause: signal.reason });
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), Math.max(0, deadline - Date.now()));
    const cancel = () => controller.abort();
    signal?.addEventListener("abort", cancel);
    try {
      const init: RequestInit = { method: op.http, headers, signal: controller.signal };
      if (body !== undefined) init.body = body;
      const response = await this.#fetch(url, init);
      // The body is read under the same timer as the headers.
      const bytes = new Uint8Array(await response.arrayBuffer());
      return { status: response.status, statusText: response.statusText, headers: response.headers, bytes };
    } catch (err) {
      if (signal?.aborted) throw new NetworkError(id, `${id}: cancelled`, { cause: signal.reason });
      if (controller.signal.aborted) throw new TimeoutError(id, `${id}: no answer within the timeout`);
      throw new NetworkError(id, `${id}: the request failed: ${describe(err)}`, { cause: err });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", cancel);
    }
  }
}

// describe names a failure of fetch by its message and, in Node, its
// cause's code (ECONNREFUSED, ENOTFOUND...): never a key or a body.
function describe(err: unknown): string {
  const e = err as { message?: unknown; cause?: { code?: unknown } } | null;
  const message = typeof e?.message === "string" ? e.message : String(err);
  const code = e?.cause?.code;
  return typeof code === "string" ? `${message} (${code})` : message;
}

/** An answer, read whole. */
interface Answer {
  status: number;
  statusText: string;
  headers: Headers;
  bytes: Uint8Array;
}

const utf8 = new TextDecoder();

// randomKey returns an Idempotency-Key of 128 random bits (hex):
// crypto.getRandomValues, unlike randomUUID, works outside secure
// contexts too.
function randomKey(): string {
  const b = globalThis.crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

function encodeBody(op: Operation, request: CallRequest): BodyInit | undefined {
  const proxied: ProxyCall | undefined = request.proxied;
  if (proxied) {
    const b = proxied.body;
    if (b === undefined) return undefined;
    if (typeof b === "string" || b instanceof Uint8Array) return b;
    return JSON.stringify(b);
  }
  if (op.body === null || request.body === undefined) return undefined;
  // An NDJSON body (importTokens) is its lines, sent as they are.
  if (op.body === "application/x-ndjson" && typeof request.body === "string") return request.body;
  return JSON.stringify(request.body);
}

// isProxyFailure tells the vault's own refusal of a proxy invocation, or
// the proxy's failure ({"proxy_error": problem}), from the destination's
// answer, which the client hands back whatever its status.
function isProxyFailure(response: Answer): boolean {
  const type = response.headers.get("Content-Type") ?? "";
  if (type.startsWith("application/problem+json")) return true;
  if (!type.startsWith("application/json")) return false;
  try {
    const body = JSON.parse(utf8.decode(response.bytes));
    return typeof body?.proxy_error === "object" && body.proxy_error !== null;
  } catch {
    return false;
  }
}

function decode(id: string, op: Operation, response: Answer): unknown {
  if (op.response === "proxied") {
    const text = utf8.decode(response.bytes);
    let body: unknown = text;
    if ((response.headers.get("Content-Type") ?? "").includes("json") && text !== "") {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const out: ProxyResponse = { status: response.status, headers: response.headers, body };
    return out;
  }
  if (op.response === "none" || response.status === 204) return undefined;
  if (op.response === "binary") return response.bytes;
  // An operation whose answer is a stream of bytes or, held to approval,
  // a pending change (exportTokens) is told apart by the answer's type.
  if ((response.headers.get("Content-Type") ?? "").startsWith("application/octet-stream")) return response.bytes;
  const text = utf8.decode(response.bytes);
  try {
    return JSON.parse(text);
  } catch {
    throw new NetworkError(id, `${id}: the answer (status ${response.status}) is not JSON`);
  }
}

// approvalRequired reads the pending change of a 202 an approval policy
// answered; the key it may carry goes to the error's key alone.
function approvalRequired(id: string, response: Answer): ApprovalRequiredError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8.decode(response.bytes));
  } catch {
    parsed = undefined;
  }
  if (parsed === null || typeof parsed !== "object" || typeof (parsed as { id?: unknown }).id !== "string") {
    throw new NetworkError(id, `${id}: the answer (status 202) is no pending change`);
  }
  const { key, ...change } = parsed as PendingChange & { key?: unknown };
  return new ApprovalRequiredError(id, change, typeof key === "string" && key !== "" ? key : undefined);
}

// problemOf reads the problem details of an error answer; an answer that
// holds none (a proxy in front, a gateway) gets one from its status.
function problemOf(response: Answer): ProblemDetails {
  const fallback: ProblemDetails = { type: "about:blank", title: response.statusText || `HTTP ${response.status}`, status: response.status };
  const text = utf8.decode(response.bytes);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fallback;
  }
  if (parsed === null || typeof parsed !== "object") return fallback;
  let p = parsed as Record<string, unknown>;
  // A proxy's own failure: {proxy_error: problem}.
  if (typeof p.proxy_error === "object" && p.proxy_error !== null) {
    p = { ...(p.proxy_error as Record<string, unknown>), proxy_error: true };
  }
  return {
    ...p,
    type: typeof p.type === "string" ? p.type : fallback.type,
    title: typeof p.title === "string" ? p.title : fallback.title,
    status: response.status,
  } as ProblemDetails;
}

/**
 * Returns the wait a Retry-After header asks for, in milliseconds:
 * delay-seconds or an HTTP date; undefined when absent or malformed.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
