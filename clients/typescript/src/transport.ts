// The shapes the generated methods and the client's transport share.

/** Options of one call; each overrides the client's default. */
export interface CallOptions {
  /**
   * The key sent as SVC-API-KEY: an application's or an authorized
   * session's key, or the operator key for the operator* methods.
   * Defaults to the client's apiKey.
   */
  apiKey?: string;
  /**
   * The Idempotency-Key of an operation that takes one (the creates).
   * Defaults to a random key per call when retries are on, so that a
   * retried request is never done twice; false sends none.
   */
  idempotencyKey?: string | false;
  /**
   * The call's purpose of access, sent as SVC-PURPOSE: one of the
   * tenant's purposes (Tenant.purposes). Defaults to the client's purpose.
   */
  purpose?: string;
  /**
   * The id of the applied change that approved this call, sent as
   * SVC-APPROVAL-ID: the second call of a held detokenization (the same
   * key, the same body) or tenant deletion. Only the operations whose
   * Operation.approvalId is true take one; another throws a TypeError.
   */
  approvalId?: string;
  /** The whole call's time limit in milliseconds, retries included. */
  timeoutMs?: number;
  /** How many times a 429 or 503 is retried. */
  maxRetries?: number;
  /** Cancels the call. */
  signal?: AbortSignal;
}

/** What a generated method hands the transport. */
export interface CallRequest {
  path?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: unknown;
  proxied?: ProxyCall;
}

/**
 * A request through a proxy (the invokeProxy* methods): the vault
 * detokenizes and transforms it, and forwards it to the proxy's
 * destination.
 */
export interface ProxyCall {
  /** The proxy's key, sent as SVC-PROXY-KEY. */
  proxyKey: string;
  /**
   * The body: a string, bytes, or any other value sent as JSON.
   * Absent: no body.
   */
  body?: unknown;
  /** The body's media type; application/json for a value sent as JSON. */
  contentType?: string;
  /** The query string for the destination. */
  query?: Record<string, string | string[]>;
  /** More headers for the destination. */
  headers?: Record<string, string>;
}

/**
 * The destination's answer as the proxy relayed it, whatever its status.
 * The proxy's own failures ({"proxy_error": problem}: a wrong proxy key,
 * a transform that failed, a destination out of reach) and the vault's
 * refusals (problem+json) throw an ApiError instead, with the problem.
 */
export interface ProxyResponse {
  status: number;
  headers: Headers;
  /** The body: parsed when it is JSON, else its text. */
  body: unknown;
}
