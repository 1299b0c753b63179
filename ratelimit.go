package tokenvault

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rate limits. Every limit is a token bucket (golang.org/x/time/rate) on
// the Vault's clock (Options.Now), kept in this process's memory: Vaults
// that share a PostgreSQL store each apply their limits separately, so N
// instances behind a load balancer admit up to N times each limit.
//
//   - Options.RatePerKey and Options.RatePerTenant bound the calls of one
//     API or session key, and of all keys of one tenant, per second, with
//     a burst of one second's worth. A call is charged once, after its key
//     is authenticated (see [CallInfo]); a call over either limit fails
//     with RateLimited and does nothing.
//   - Options.AuthFailuresPerMinute bounds failed authentications
//     (Unauthenticated) from one client address ([CallInfo.ClientAddress]):
//     once an address has used them up, its calls are RateLimited without
//     their key being looked at, until the bucket refills. In-process
//     callers, which give no address, are not throttled.
//   - Options.SessionsPerApplication bounds the sessions one public
//     application creates.
//
// Buckets of keys, tenants, addresses and applications not seen for as
// long as a full bucket takes to refill are forgotten (a forgotten bucket
// is exactly a full one), so the memory they take is bounded by the
// callers active in that window.

// Defaults of the rate limit options.
const (
	// DefaultAuthFailuresPerMinute is Options.AuthFailuresPerMinute's
	// zero value: failed authentications allowed per client address and
	// minute (and at once).
	DefaultAuthFailuresPerMinute = 100
	// DefaultSessionsPerApplication is Options.SessionsPerApplication's
	// zero value: sessions one public application may create per second.
	DefaultSessionsPerApplication = 5
	// SessionBurstSeconds is how many seconds' worth of sessions a public
	// application may create at once.
	SessionBurstSeconds = 10
)

// limits are the Vault's rate limiters; a nil set is no limit.
type limits struct {
	perKey, perTenant, authFailures, sessions *limiterSet
}

func newLimits(opts Options) limits {
	var l limits
	l.perKey = newLimiterSet(opts.RatePerKey, 1)
	l.perTenant = newLimiterSet(opts.RatePerTenant, 1)
	failures := float64(opts.AuthFailuresPerMinute)
	if opts.AuthFailuresPerMinute == 0 {
		failures = DefaultAuthFailuresPerMinute
	}
	l.authFailures = newLimiterSet(failures/60, 60)
	sessions := opts.SessionsPerApplication
	if sessions == 0 {
		sessions = DefaultSessionsPerApplication
	}
	l.sessions = newLimiterSet(sessions, SessionBurstSeconds)
	return l
}

// limiterSet is one token bucket per name (a key's MAC, a tenant id, an
// address, an application id).
type limiterSet struct {
	limit rate.Limit
	burst int
	// idle is how long a bucket takes to refill from empty: one idle that
	// long is full again, and so may be forgotten.
	idle time.Duration

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastEvict time.Time
}

type bucket struct {
	l    *rate.Limiter
	seen time.Time
}

// newLimiterSet returns the buckets of perSecond events a second, of which
// burstSeconds' worth (at least one) may come at once; nil when perSecond
// is not positive (no limit).
func newLimiterSet(perSecond, burstSeconds float64) *limiterSet {
	if !(perSecond > 0) || math.IsInf(perSecond, 1) {
		return nil
	}
	burst := int(math.Min(math.Ceil(perSecond*burstSeconds), math.MaxInt32))
	burst = max(burst, 1)
	idle := time.Duration(float64(burst) / perSecond * float64(time.Second))
	return &limiterSet{limit: rate.Limit(perSecond), burst: burst, idle: max(idle, time.Second), buckets: map[string]*bucket{}}
}

// get returns the bucket of name, creating it full, and forgets idle
// buckets now and then. s.mu must be held.
func (s *limiterSet) get(name string, now time.Time) *rate.Limiter {
	if now.Sub(s.lastEvict) >= s.idle {
		for n, b := range s.buckets {
			if now.Sub(b.seen) >= s.idle {
				delete(s.buckets, n)
			}
		}
		s.lastEvict = now
	}
	b := s.buckets[name]
	if b == nil {
		b = &bucket{l: rate.NewLimiter(s.limit, s.burst)}
		s.buckets[name] = b
	}
	if now.After(b.seen) {
		b.seen = now
	}
	return b.l
}

// take takes one event from name's bucket, or reports how long until one
// is available (and takes nothing).
func (s *limiterSet) take(name string, now time.Time) (ok bool, retryAfter time.Duration) {
	if s == nil {
		return true, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.get(name, now).ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// blocked reports whether name's bucket is empty, and for how long, without
// taking anything.
func (s *limiterSet) blocked(name string, now time.Time) (bool, time.Duration) {
	if s == nil {
		return false, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[name]
	if b == nil {
		return false, 0
	}
	tokens := b.l.TokensAt(now)
	if tokens >= 1 {
		return false, 0
	}
	return true, time.Duration((1 - tokens) / float64(s.limit) * float64(time.Second))
}

// size is the number of buckets held, for tests.
func (s *limiterSet) size() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.buckets)
}

func errRateLimited(what string, retryAfter time.Duration) *Error {
	return &Error{Kind: RateLimited, Message: "too many requests " + what + "; try again later", RetryAfter: max(retryAfter, time.Millisecond)}
}

// chargeCall counts one call of principal p against the per-key and
// per-tenant limits, once per call (see CallInfo).
func (t *txn) chargeCall(mac []byte, p *principal) error {
	l := &t.v.limits
	if l.perKey == nil && l.perTenant == nil {
		return nil
	}
	if info := callInfo(t.ctx); info != nil && !info.charged.CompareAndSwap(false, true) {
		return nil
	}
	now := t.v.now()
	if ok, wait := l.perKey.take(string(mac), now); !ok {
		return errRateLimited("with this key", wait)
	}
	if ok, wait := l.perTenant.take(p.tenantID, now); !ok {
		return errRateLimited("for this tenant", wait)
	}
	return nil
}

// authThrottled refuses a call from an address that has used up its failed
// authentications.
func (t *txn) authThrottled() error {
	info := callInfo(t.ctx)
	if info == nil || info.ClientAddress == "" {
		return nil
	}
	if blocked, wait := t.v.limits.authFailures.blocked(info.ClientAddress, t.v.now()); blocked {
		return errRateLimited("with keys that failed to authenticate from this address", wait)
	}
	return nil
}

// authFailed counts a failed authentication against the caller's address,
// once per call.
func (t *txn) authFailed() {
	info := callInfo(t.ctx)
	if info == nil || info.ClientAddress == "" || !info.failed.CompareAndSwap(false, true) {
		return
	}
	t.v.limits.authFailures.take(info.ClientAddress, t.v.now())
}

// chargeSession counts one session created by public application appID.
func (v *Vault) chargeSession(appID string) error {
	if ok, wait := v.limits.sessions.take(appID, v.now()); !ok {
		return errRateLimited("creating sessions with this application", wait)
	}
	return nil
}

// limiterSizes reports how many buckets each limit holds, for tests.
func (v *Vault) limiterSizes() map[string]int {
	return map[string]int{
		"key": v.limits.perKey.size(), "tenant": v.limits.perTenant.size(),
		"auth_failures": v.limits.authFailures.size(), "sessions": v.limits.sessions.size(),
	}
}
