// Package httpapi mounts the whole REST interface of a [tokenvault.Vault] on
// any net/http mux.
//
// It is a pure translation: decode the request, call one Vault method with
// the key from the SVC-API-KEY header, encode the result. No business rule
// lives here; the Vault checks keys and permissions itself.
//
//	mux := http.NewServeMux()
//	mux.Handle("/vault/", http.StripPrefix("/vault", httpapi.New(v, httpapi.Options{})))
//
// # Errors
//
// Every error is an application/problem+json body (RFC 7807) shaped as
// {"type", "title", "status", "detail", "errors": {"field.path": ["..."]}}.
// Statuses come from one table keyed by [tokenvault.Kind]: 400 invalid,
// 401 unauthenticated, 403 permission denied, 404 not found (also another
// tenant's resource), 409 conflict, 413 body too large, 415 unsupported media
// type, 422 unprocessable, 429 rate limited (with a Retry-After header in
// whole seconds, rounded up), 500 internal (answered generically; the cause
// goes to the logger, never to the caller), 503 a service the request needs
// (the Mailer) failed and nothing was saved, 507 the storage is full and
// nothing was saved (retry once space is freed; with a Retry-After header
// too). Unknown routes are 404 and
// known routes with another method 405, in the same format. A 401's detail names
// the SVC-API-KEY header, and says that Authorization is not read when the
// request had one. A key is sent once: two SVC-API-KEY headers, or two
// different proxy keys (headers or svc-proxy-key parameters), are 400
// naming the header, since a proxy in front may have read the other one
// (headers.go). A JSON body declared in a charset other than UTF-8 is 415.
// A member given twice in one object is 400 naming it: the same key
// (jsoncheck.Check), or keys that go into one field of the request, equal
// but for case as encoding/json matches them (jsoncheck.Fold); the keys
// of maps (metadata, token data) are exact.
//
// # Caching
//
// Every answer, success or error, on every route (the proxy's included)
// carries Cache-Control: no-store and X-Content-Type-Options: nosniff
// (headers_store.go); NoStore gives routes served beside the API the same.
//
// # Paths
//
// A path with one trailing slash is served as the path without it
// (/applications/ as /applications, /tokens/{id}/ as /tokens/{id}), as the
// legacy JavaScript SDK sends them; this is done once, before routing, so
// every route has it. Under /proxy/ the path is the caller's and is
// forwarded as sent, its slash included. GET / (exactly the root) answers
// {"name", "openapi", "detail"}, openapi being the path of the document
// under the prefix the handler is mounted at.
//
// # Query parameters
//
// Each route declares the query parameters it takes where it is
// registered: lists take page, size and start (a cursor) and their
// filters. Any other parameter is a 400 naming it in errors, so a
// misspelt filter is never silently ignored. Proxy invocation takes any
// query: it belongs to the destination (svc-proxy-key aside).
//
// # Idempotency
//
// Every POST that creates something (see idempotentRoutes: /tokenize,
// /tokens, /token-intents, /applications and its regenerate, /sessions, /reactor-formulas,
// /reactors and their react, /proxies, /webhooks and their rotate-secret,
// /tenants/self/invitations and their resend, /tenants/self/rotate-data-key, /tenants/self/rotate-fpe-key) takes an Idempotency-Key header
// (1 to 255 printable ASCII characters, else 400; sent once). The request
// runs through [tokenvault.Vault.Idempotent]: the body is read once, and
// the handler's whole response (status, headers, body) is recorded. A
// repeat by the same caller with the same method, path, media type and
// body within 24 hours answers that response with the header
// Idempotent-Replayed: true; the same key with another request, or a
// repeat after the caller's grants changed, is 422; a repeat while the
// first runs is 409. A public application's requests are never kept nor
// replayed (its key is every end user's). Responses of status 500 and more,
// and 429, are not kept: the key is released and a retry runs again. Other
// routes ignore the header.
//
// # Client address
//
// Each request carries a new [tokenvault.CallInfo] whose ClientAddress is
// the host of the connection's remote address (with
// Options.TrustForwardedFor, the last X-Forwarded-For entry when it is an
// IP address, with or without a port; a last entry that is not an IP
// address, such as "not-an-ip-7", is no address, and the connection's is
// used instead, so made-up values all count as the proxy's one address).
// The Vault uses it to throttle failed authentications (only further
// failures are refused, never a key that authenticates) and to budget the
// sessions a public application creates per address; it also makes a
// request count once against the rate limits. Its TraceID is the
// request's X-Request-Id header (1 to 128 printable ASCII characters, no
// space), or else the trace id of its W3C traceparent header: the
// trace_id of the webhook events the request's changes emit. Other values
// are ignored.
//
// The request's SVC-PURPOSE header, when present, is its purpose of
// access (tokenvault.WithPurpose, PurposeHeader): the Vault refuses a
// name its tenant's list does not hold (400, field purpose), and decides
// access rules with purposes for it.
//
// # OpenAPI
//
// openapi.yaml in this directory is the OpenAPI 3.1 document of every
// route: parameters, request and response schemas, the problem schema and
// the security schemes. The handler serves it as JSON at GET /openapi.json
// (no key), and [OpenAPI] returns it. Tests hold the handler to it both
// ways: the registered routes and the document's operations must be the
// same set, each operation lists exactly the query parameters its route
// takes, and every exchange of the httpapi and client tests is validated
// against it with kin-openapi, which is a test dependency only. The YAML
// uses no anchors, aliases or merge keys (a test holds it to that), so
// tools that read it directly, such as swagger-parser, accept it.
//
// # Routes without an API key
//
// GET / and GET /openapi.json answer where the document is, and the
// document above. GET /audit/keys answers {"keys": [...]}, the public keys
// that verify the audit chain's checkpoints (auditchain.PublicKey; every
// key ever used, a retired one with its retired_at), for anyone verifying
// an audit export. The /operator/ routes take the operator key instead
// (see "The operator API").
//
// POST /tenants/invitations/accept takes {"token": "...", "user": {...}}:
// the invitation link token is the credential. It answers 201 with the new
// member, or 404 for an unknown, used, replaced or expired link.
//
// # The operator API
//
// With Options.OperatorKey set, the routes under /operator/ serve the
// host's own operations to callers that send that key in the SVC-API-KEY
// header:
//
//	POST   /operator/tenants       {"name", "owner"?, "application_name"?} -> 201
//	                               {"tenant", "owner", "application"}, the
//	                               application's key shown this once
//	GET    /operator/tenants       ?page, size, start -> a page of tenants
//	GET    /operator/tenants/{id}  -> the tenant
//	DELETE /operator/tenants/{id}  -> 204 once all of its data is removed
//	GET    /operator/backup        -> application/octet-stream, the store's
//	                               snapshot (422 for a store that cannot)
//	GET    /operator/backup/subject-keys  -> the subject key store's snapshot
//	                               (503 without one; docs/erasure.md)
//	POST   /operator/audit/keys/rotate  -> the new checkpoint signing key
//	                               (auditchain.PublicKey); the old one retired
//	POST   /operator/tenants/{id}/audit/checkpoints  -> the tenant's chain
//	                               head signed now (auditchain.Checkpoint)
//
// The operator key is no tenant key: every other route refuses it (401,
// as an unknown key), and /operator/ refuses tenant keys (401). Only its
// SHA-256 is kept, compared in constant time; it is never logged. A failed
// attempt counts in the Vault's failed-authentication throttle of the
// client's address (429 once used up; [tokenvault.Vault.AuthenticateOperator]).
// POST /operator/tenants takes no Idempotency-Key (idempotency records
// belong to a tenant's caller): after a failed create, list the tenants
// before creating again. Without an operator key the /operator/ routes
// answer 404 like unknown routes, so a server that does not use them does
// not reveal them. The
// backup's write deadline is lifted (a large store may take longer than a
// server's WriteTimeout); a failure after its first byte aborts the
// connection, so a client never takes a short file for a whole one. The
// OpenAPI document describes these routes under the security scheme
// OperatorKey.
//
// # Request bodies
//
// Bodies are JSON (Content-Type application/json, or none), one value, at
// most Options.MaxBodyBytes (default 1 MiB). Unknown fields are refused
// with a 400 naming the field, so a typo (or a field that may not be sent,
// such as an application's type on update) is never silently ignored.
// Strings, keys included, must be valid Unicode: invalid UTF-8 or a lone
// UTF-16 surrogate escape ("\ud800") is a 400 naming the value's path
// (data.name, [2].data), checked on the raw bytes (internal/jsoncheck)
// because encoding/json would replace it with U+FFFD silently; so is a
// key given twice in one object, which it would keep only the last value
// of (a 400 naming the member, data.a). A date-time that is not RFC 3339 is a 400 naming its field (expires_at).
//
// # Lists
//
// List endpoints take page (default 1) and size (default 20, at most 100;
// members 50); a value that is not a positive integer or exceeds the maximum
// is a 400. Id filters repeat: ?id=a&id=b.
package httpapi
