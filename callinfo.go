package tokenvault

import (
	"context"
	"sync/atomic"
)

// CallInfo tells the caller of a Vault method what the Vault learnt while
// serving it, for logs and metrics: which tenant the credential belonged
// to. Put one in the context with [WithCallInfo] before the call and read
// it after; the Vault never reads it back, so it cannot change a decision.
//
// It is safe to read while the call is still running (a reactor's
// asynchronous work may record into it later).
type CallInfo struct {
	tenantID atomic.Pointer[string]
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

// recordTenant notes the tenant a call authenticated for, if the caller
// asked (the first one wins: a call acts for one tenant).
func recordTenant(ctx context.Context, tid string) {
	if info, ok := ctx.Value(callInfoKey{}).(*CallInfo); ok && info != nil && tid != "" {
		info.tenantID.CompareAndSwap(nil, &tid)
	}
}
