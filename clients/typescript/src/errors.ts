// The errors the client throws. None carries an API key or a request
// body: messages hold the operation, the status and the problem the
// server answered, which never echoes secrets.

import type { PendingChange } from "./generated.js";

/** The kind of an API error, one per status the API uses. */
export type ErrorKind =
  | "invalid" // 400
  | "unauthenticated" // 401
  | "permission_denied" // 403
  | "not_found" // 404
  | "conflict" // 409
  | "too_large" // 413
  | "unsupported_media_type" // 415
  | "unprocessable" // 422
  | "rate_limited" // 429
  | "internal" // 500 and other 5xx
  | "bad_gateway" // 502
  | "unavailable" // 503
  | "storage_full" // 507
  | "gone" // 410
  | "unknown"; // another status

/** The problem details (RFC 7807) of an error answer. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  /** For 400s, each offending field by its JSON path, with what is wrong. */
  errors?: Record<string, string[]>;
  /** A proxy's own failure answers {proxy_error: problem}. */
  [extension: string]: unknown;
}

/** The base of every error the client throws. */
export class TokenVaultError extends Error {
  /** The operationId of the call that failed. */
  readonly operation: string;
  constructor(operation: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.operation = operation;
  }
}

/** A non-2xx answer of the API, with its problem details. */
export class ApiError extends TokenVaultError {
  readonly status: number;
  readonly kind: ErrorKind;
  readonly type: string;
  readonly title: string;
  readonly detail?: string;
  readonly instance?: string;
  /** Field errors: JSON path of the field -> what is wrong with it. */
  readonly fieldErrors: Record<string, string[]>;
  readonly problem: ProblemDetails;
  /** The server's Retry-After in milliseconds, when it sent one. */
  readonly retryAfterMs?: number;
  /** How many requests were made, retries included. */
  readonly attempts: number;

  constructor(operation: string, problem: ProblemDetails, attempts: number, retryAfterMs?: number) {
    const detail = problem.detail ? `: ${problem.detail}` : "";
    super(operation, `${operation}: ${problem.status} ${problem.title}${detail}`);
    this.status = problem.status;
    this.kind = kindOf(problem.status);
    this.type = problem.type;
    this.title = problem.title;
    if (problem.detail !== undefined) this.detail = problem.detail;
    if (problem.instance !== undefined) this.instance = problem.instance;
    this.fieldErrors = problem.errors ?? {};
    this.problem = problem;
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
    this.attempts = attempts;
  }
}

/** 400: the request is invalid; fieldErrors names the fields. */
export class InvalidRequestError extends ApiError {}
/** 401: the key is missing, unknown or expired. */
export class UnauthenticatedError extends ApiError {}
/** 403: the key lacks a permission. */
export class PermissionDeniedError extends ApiError {}
/** 404: not found (also another tenant's resource). */
export class NotFoundError extends ApiError {}
/** 409: a conflict (an id taken, an Idempotency-Key still running). */
export class ConflictError extends ApiError {}
/** 413: the body is too large. */
export class TooLargeError extends ApiError {}
/** 415: the wrong content type. */
export class UnsupportedMediaTypeError extends ApiError {}
/** 422: unprocessable (an Idempotency-Key reused for another request...). */
export class UnprocessableError extends ApiError {}
/** 429: rate limited; retryAfterMs says when to come back. */
export class RateLimitedError extends ApiError {}
/** 500 and other 5xx: the server failed. */
export class InternalError extends ApiError {}
/** 502: a proxy's or reactor's destination failed. */
export class BadGatewayError extends ApiError {}
/** 503: a service the request needs failed; nothing was saved. */
export class UnavailableError extends ApiError {}
/** 507: the server's storage is full; nothing was saved. */
export class StorageFullError extends ApiError {}
/** 410: the resource was destroyed for good (a token of an erased data subject). */
export class GoneError extends ApiError {}

/**
 * A 202 of an operation the tenant's approval policy held (creating a
 * management application, widening one's grants, regenerating a key, a
 * bulk detokenization, deleting the tenant, changing the policy): the
 * call did not take effect and waits as a pending change until the
 * policy's approvers approve it (approveChange). Not an ApiError: nothing
 * failed, and it is never retried; a retry would request another change.
 *
 * For a creation or a regeneration, key is the key the application will
 * have once the change is applied, shown only here. It is not
 * enumerable, so that logging the error or JSON.stringify does not show
 * it, and the message never holds it.
 */
export class ApprovalRequiredError extends TokenVaultError {
  /** Always 202. */
  readonly status = 202;
  /** The pending change: its id (for approveChange, getApproval, and CallOptions.approvalId), before and after. */
  readonly change: PendingChange;
  declare readonly key?: string;

  constructor(operation: string, change: PendingChange, key?: string) {
    super(operation, `${operation}: held for approval as pending change ${change.id} (${change.operation}, ` +
      `${change.required} approval${change.required === 1 ? "" : "s"} required, expires ${change.expires_at})`);
    this.change = change;
    if (key !== undefined) {
      Object.defineProperty(this, "key", { value: key, enumerable: false, writable: false, configurable: false });
    }
  }
}

/** The request got no answer: the network failed or the call timed out. */
export class NetworkError extends TokenVaultError {}
/** The call's timeout passed before an answer came. */
export class TimeoutError extends NetworkError {}

const byStatus: Record<number, [ErrorKind, typeof ApiError]> = {
  400: ["invalid", InvalidRequestError],
  401: ["unauthenticated", UnauthenticatedError],
  403: ["permission_denied", PermissionDeniedError],
  404: ["not_found", NotFoundError],
  409: ["conflict", ConflictError],
  413: ["too_large", TooLargeError],
  415: ["unsupported_media_type", UnsupportedMediaTypeError],
  422: ["unprocessable", UnprocessableError],
  429: ["rate_limited", RateLimitedError],
  500: ["internal", InternalError],
  502: ["bad_gateway", BadGatewayError],
  503: ["unavailable", UnavailableError],
  507: ["storage_full", StorageFullError],
  410: ["gone", GoneError],
};

function kindOf(status: number): ErrorKind {
  const k = byStatus[status];
  if (k) return k[0];
  return status >= 500 ? "internal" : "unknown";
}

/** Returns the ApiError subclass for the answer's status. */
export function apiError(operation: string, problem: ProblemDetails, attempts: number, retryAfterMs?: number): ApiError {
  const entry = byStatus[problem.status];
  const Class = entry ? entry[1] : problem.status >= 500 ? InternalError : ApiError;
  return new Class(operation, problem, attempts, retryAfterMs);
}
