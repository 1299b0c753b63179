package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/ratelimit"
)

// Rate limits. Every limit is a token bucket on the Vault's clock
// (Options.Now), kept in this process's memory: Vaults that share a
// PostgreSQL store each apply their limits separately, so N instances
// behind a load balancer admit up to N times each limit. The buckets, the
// client address that names one, and the RateLimited error are
// internal/ratelimit's; this file says which limits the Vault has and who
// is charged.
//
//   - Options.Limits.RatePerKey and Options.Limits.RatePerTenant bound the calls of one
//     API or session key, and of all keys of one tenant, per second, with
//     a burst of one second's worth. A call is charged once, after its key
//     is authenticated (see [CallInfo]); a call over either limit fails
//     with RateLimited and does nothing. A public application's key, which
//     every browser holds, is charged per client address (both its key's
//     and its tenant's bucket), so no holder can use up the calls of the
//     others or of the tenant's private keys.
//   - Options.Limits.AuthFailuresPerMinute bounds failed authentications
//     (Unauthenticated) from one client address ([CallInfo.ClientAddress]):
//     once an address has used them up, its further failures are
//     RateLimited instead of Unauthenticated until the bucket refills. A
//     key that authenticates is never refused by it, so failures sent
//     from an address that others share (a NAT, a reverse proxy) lock
//     nobody out. In-process callers, which give no address, are not
//     throttled.
//   - Options.Limits.SessionsPerApplication bounds the sessions one public
//     application creates from one client address (internal/sessions).
//
// Each limit is charged exactly once per call, however many times a store
// transaction function runs: group commit runs a function again alone
// when its batch fails, optimistic stores run it again on a conflict. The
// first charge's outcome is kept in the call's CallInfo and answered to
// every run (a call refused once stays refused), so a run again is never
// a free second try.
//
// Buckets of keys, tenants, addresses and applications not seen for as
// long as a full bucket takes to refill are forgotten (internal/ratelimit),
// so the memory they take is bounded by the callers active in that window.

// Defaults of the rate limit options.
const (
	// DefaultAuthFailuresPerMinute is Options.Limits.AuthFailuresPerMinute's
	// zero value: failed authentications allowed per client address and
	// minute (and at once).
	DefaultAuthFailuresPerMinute = 100
	// DefaultSessionsPerApplication is Options.Limits.SessionsPerApplication's
	// zero value: sessions one public application may create per second
	// from one client address.
	DefaultSessionsPerApplication = 5
	// SessionBurstSeconds is how many seconds' worth of sessions a public
	// application may create at once from one client address.
	SessionBurstSeconds = 10
)

// newLimits makes the limiters opts asks for, zero values resolved to the
// documented defaults (Options.Limits).
func newLimits(opts Options) ratelimit.Limits {
	var l ratelimit.Limits
	l.PerKey = ratelimit.NewSet(opts.Limits.RatePerKey, 1)
	l.PerTenant = ratelimit.NewSet(opts.Limits.RatePerTenant, 1)
	failures := float64(opts.Limits.AuthFailuresPerMinute)
	if opts.Limits.AuthFailuresPerMinute == 0 {
		failures = DefaultAuthFailuresPerMinute
	}
	l.AuthFailures = ratelimit.NewSet(failures/60, 60)
	sessions := opts.Limits.SessionsPerApplication
	if sessions == 0 {
		sessions = DefaultSessionsPerApplication
	}
	l.Sessions = ratelimit.NewSet(sessions, SessionBurstSeconds)
	return l
}

// capOrDefault is a cap option's value: def for zero, as given else
// (negative: no cap).
func capOrDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// chargeCall counts one call of principal p against the per-key and
// per-tenant limits (ratelimit.Limits.ChargeCall).
func (t *txn) chargeCall(mac []byte, p *principal) error {
	return t.v.limits.ChargeCall(t.Ctx, mac, p, t.v.now())
}

// authFailed counts a failed authentication against the caller's address
// and returns the error to answer (ratelimit.Limits.AuthFailed).
func (t *txn) authFailed(failure error) error {
	return t.v.authFailed(t.Ctx, failure)
}

func (v *Vault) authFailed(ctx context.Context, failure error) error {
	return v.limits.AuthFailed(ctx, failure, v.now())
}

// chargeSession counts one session created by public application appID
// from the call's client address (ratelimit.Limits.ChargeSession).
func (t *txn) chargeSession(appID string) error {
	return t.v.limits.ChargeSession(t.Ctx, appID, t.v.now())
}

// limiterSizes reports how many buckets each limit holds, for tests.
func (v *Vault) limiterSizes() map[string]int { return v.limits.Sizes() }
