package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/ratelimit"
	"github.com/tokenvault/tokenvault/internal/unit"
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

// limits are the Vault's rate limiters; a nil set is no limit.
type limits struct {
	perKey, perTenant, authFailures, sessions *ratelimit.Set
}

// newLimits makes the limiters opts asks for, zero values resolved to the
// documented defaults (Options.Limits).
func newLimits(opts Options) limits {
	var l limits
	l.perKey = ratelimit.NewSet(opts.Limits.RatePerKey, 1)
	l.perTenant = ratelimit.NewSet(opts.Limits.RatePerTenant, 1)
	failures := float64(opts.Limits.AuthFailuresPerMinute)
	if opts.Limits.AuthFailuresPerMinute == 0 {
		failures = DefaultAuthFailuresPerMinute
	}
	l.authFailures = ratelimit.NewSet(failures/60, 60)
	sessions := opts.Limits.SessionsPerApplication
	if sessions == 0 {
		sessions = DefaultSessionsPerApplication
	}
	l.sessions = ratelimit.NewSet(sessions, SessionBurstSeconds)
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
// per-tenant limits, once per call (see CallInfo): a transaction function
// run again gets the first run's answer.
func (t *txn) chargeCall(mac []byte, p *principal) error {
	l := &t.v.limits
	if l.perKey == nil && l.perTenant == nil {
		return nil
	}
	info := unit.CallOf(t.Ctx)
	return info.Once(unit.ChargeCallLimits, func() error {
		key, tenant := string(mac), p.TenantID
		if p.ActorType == ActorApplication && p.AppType == Public {
			// A public key is in every browser: one bucket for all of
			// them would let any holder use up everyone's calls, so each
			// client address has its own (storage is bounded otherwise:
			// internal/sessions, limits.go).
			addr := "\x00public\x00" + ratelimit.Address(info.ClientAddress)
			key, tenant = key+addr, tenant+addr
		}
		now := t.v.now()
		switch refused, wait := ratelimit.TakeBoth(l.perKey, key, l.perTenant, tenant, now); refused {
		case nil:
			return nil
		case l.perKey:
			return ratelimit.Error("with this key", wait)
		default:
			return ratelimit.Error("for this tenant", wait)
		}
	})
}

// authFailed counts a failed authentication, whose error is failure,
// against the caller's address, once per call, and returns the error to
// answer: failure, or RateLimited when the address has used up its
// failures (which counts nothing more). Only failures are ever throttled:
// a key that authenticates never reaches this.
func (t *txn) authFailed(failure error) error {
	return t.v.authFailed(t.Ctx, failure)
}

func (v *Vault) authFailed(ctx context.Context, failure error) error {
	info := unit.CallFrom(ctx)
	if v.limits.authFailures == nil || info == nil || info.ClientAddress == "" {
		return failure
	}
	err := info.Once(unit.ChargeAuthFailure, func() error {
		if ok, wait := v.limits.authFailures.Take(ratelimit.Address(info.ClientAddress), v.now()); !ok {
			return ratelimit.Error("with keys that failed to authenticate from this address", wait)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return failure
}

// chargeSession counts one session created by public application appID
// from the call's client address, once per call.
func (t *txn) chargeSession(appID string) error {
	if t.v.limits.sessions == nil {
		return nil
	}
	info := unit.CallOf(t.Ctx)
	return info.Once(unit.ChargeSessionLimit, func() error {
		name := appID + "\x00" + ratelimit.Address(info.ClientAddress)
		if ok, wait := t.v.limits.sessions.Take(name, t.v.now()); !ok {
			return ratelimit.Error("creating sessions with this application from this address", wait)
		}
		return nil
	})
}

// limiterSizes reports how many buckets each limit holds, for tests.
func (v *Vault) limiterSizes() map[string]int {
	return map[string]int{
		"key": v.limits.perKey.Size(), "tenant": v.limits.perTenant.Size(),
		"auth_failures": v.limits.authFailures.Size(), "sessions": v.limits.sessions.Size(),
	}
}
