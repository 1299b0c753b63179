// @tokenvault/client: a client of the Token Vault REST API for Node 20+
// and browsers, on fetch, with no dependencies.

export { TokenVault, parseRetryAfter } from "./client.js";
export type { ClientOptions } from "./client.js";
export * from "./errors.js";
export type { CallOptions, ProxyCall, ProxyResponse } from "./transport.js";
export * from "./generated.js";
