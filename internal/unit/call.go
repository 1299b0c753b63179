package unit

import (
	"context"
	"sync"
	"sync/atomic"
)

// CallInfo carries what one call of a Vault method is about, both ways.
// Put one in the context with WithCallInfo before the call; use a new
// one for every call (every HTTP request, say).
//
// On the way in, ClientAddress is the address the call came from (package
// httpapi sets the host of the request's remote address), which the Vault
// uses only for its limits (see the Vault's Options): to throttle failed
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
// Vault.Idempotent running an operation), and every run gets the first
// charge's answer: a call refused once stays refused. So reusing one
// CallInfo for several calls charges only the first of them, and repeats
// its refusal to the others.
//
// It is safe to read while the call is still running (a reactor's
// asynchronous work may record into it later).
type CallInfo struct {
	// ClientAddress is the caller's network address (an IP address, no
	// port), or "" for an in-process caller. Set it before the call.
	ClientAddress string
	// TraceID identifies the call in the caller's tracing (httpapi takes
	// it from the request's X-Request-Id header, or the trace id of its
	// W3C traceparent): webhook events of the changes the call made carry
	// it as trace_id. Empty: none. Set it before the call.
	TraceID string
	// Route names what the call serves, for the audit line of a denied
	// call: package httpapi sets the request's method and pattern
	// ("GET /tokens/{id}"). Empty: the line names the Vault method.
	Route string

	tenantID atomic.Pointer[string]
	// subject and denied are the call's denial record (denied.go).
	subject atomic.Pointer[Subject]
	denied  atomic.Bool

	// mu guards charged: the answer of each limit the call was charged
	// against (see Once).
	mu      sync.Mutex
	charged [chargeKinds]struct {
		done bool
		err  error
	}
}

// Charge names a limit a call is charged against once.
type Charge uint8

const (
	ChargeCallLimits   Charge = iota // per key and per tenant
	ChargeAuthFailure                // failed authentications per address
	ChargeSessionLimit               // sessions per application and address
	chargeKinds                      // how many there are
)

// Once runs charge the first time the call reaches limit kind and answers
// its outcome then and every later time, so that a transaction function
// run again (group commit, optimistic retries) is neither charged twice
// nor let through after a refusal.
func (c *CallInfo) Once(kind Charge, charge func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := &c.charged[kind]
	if !ch.done {
		ch.done, ch.err = true, charge()
	}
	return ch.err
}

// TenantID is the tenant whose key (API key, session key, proxy key or
// invitation link) the call authenticated, or "" if none was accepted.
func (c *CallInfo) TenantID() string {
	if p := c.tenantID.Load(); p != nil {
		return *p
	}
	return ""
}

type callInfoKey struct{}

// WithCallInfo returns a context that makes Vault methods record into info.
func WithCallInfo(ctx context.Context, info *CallInfo) context.Context {
	return context.WithValue(ctx, callInfoKey{}, info)
}

// CallFrom returns the CallInfo of ctx, or nil.
func CallFrom(ctx context.Context) *CallInfo {
	info, _ := ctx.Value(callInfoKey{}).(*CallInfo)
	return info
}

// WithCall returns ctx with a CallInfo, adding a private one when the
// caller gave none, so that every store transaction of one call (retries
// included) shares one.
func WithCall(ctx context.Context) context.Context {
	if CallFrom(ctx) != nil {
		return ctx
	}
	return WithCallInfo(ctx, new(CallInfo))
}

// CallOf returns the CallInfo of ctx; a context without one (which
// WithCall gives every Vault method) gets a fresh one, charged on its own.
func CallOf(ctx context.Context) *CallInfo {
	if info := CallFrom(ctx); info != nil {
		return info
	}
	return new(CallInfo)
}

// RecordTenant notes the tenant a call authenticated for, if the caller
// asked (the first one wins: a call acts for one tenant).
func RecordTenant(ctx context.Context, tid string) {
	if info := CallFrom(ctx); info != nil && tid != "" {
		info.tenantID.CompareAndSwap(nil, &tid)
	}
}

// TraceID is the TraceID of ctx's CallInfo, or "".
func TraceID(ctx context.Context) string {
	if c := CallFrom(ctx); c != nil {
		return c.TraceID
	}
	return ""
}
