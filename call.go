package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// Credential is a secret a caller presents to authenticate: an
// application's API key, a session key (SVC-API-KEY over HTTP), or the
// key a Vault method hands out once (Application.Key, Session.SessionKey,
// TenantBootstrap's application key). Every Vault method that acts for a
// caller takes one as its key parameter, so that a credential and an id,
// both text, cannot be passed in each other's place without a compile
// error: GetTenant(ctx, key) and GetTenantByID(ctx, id) do not swap.
//
// A Credential is a string underneath and encodes to JSON as one. Treat it
// as a secret: the Vault stores only keyed hashes of it and never writes
// it to a log or an error, and so should its holder.
type Credential string

// CallInfo carries what one call of a Vault method is about, both ways.
// Put one in the context with [WithCallInfo] before the call; use a new
// one for every call (every HTTP request, say).
//
// On the way in, ClientAddress is the address the call came from (package
// httpapi sets the host of the request's remote address), which the Vault
// uses only for its limits (see [Options]): to throttle failed
// authentications, to budget a public application's sessions and calls
// per address. An IP address, with or without a port; any other value
// counts as one address shared by every such value. On the way
// out, TenantID tells the caller, for logs and metrics, which tenant the
// credential belonged to; the Vault never reads that back, so it cannot
// change a decision.
//
// A CallInfo also marks one call for the rate limits: a call is charged
// once against each limit (its key's, its tenant's, its address's failed
// authentications, its application's sessions) however many store
// transactions it runs or runs again (retries, group commit, or
// [Vault.Idempotent] running an operation), and every run gets the first
// charge's answer: a call refused once stays refused. So reusing one
// CallInfo for several calls charges only the first of them, and repeats
// its refusal to the others.
//
// It is safe to read while the call is still running (a reactor's
// asynchronous work may record into it later).
//
// Its fields: ClientAddress, the caller's network address (an IP address,
// no port), or "" for an in-process caller; TraceID, which identifies the
// call in the caller's tracing (webhook events of the changes it made carry
// it as trace_id); Route, what the call serves (package httpapi sets the
// method and pattern, "GET /tokens/{id}"), which the audit line of a
// denied call names instead of the Vault method. Set them before the
// call. Its method TenantID reports the
// tenant whose credential the call authenticated, or "".
type CallInfo = unit.CallInfo

// WithCallInfo returns a context that makes Vault methods record into info.
func WithCallInfo(ctx context.Context, info *CallInfo) context.Context {
	return unit.WithCallInfo(ctx, info)
}
