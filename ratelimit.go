package tokenvault

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/internal/unit"
	"golang.org/x/time/rate"
)

// Rate limits. Every limit is a token bucket (golang.org/x/time/rate) on the Vault's clock
// (Options.Now), kept in this process's memory: Vaults that share a
// PostgreSQL store each apply their limits separately, so N instances
// behind a load balancer admit up to N times each limit.
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
//     application creates from one client address (sessions_limits.go).
//
// Each limit is charged exactly once per call, however many times a store
// transaction function runs: group commit runs a function again alone
// when its batch fails, optimistic stores run it again on a conflict. The
// first charge's outcome is kept in the call's CallInfo and answered to
// every run (a call refused once stays refused), so a run again is never
// a free second try.
//
// A bucket's clock only goes forward: concurrent calls read the clock at
// different moments and reach a bucket in any order, and a bucket that
// took an earlier reading as its latest would credit the same interval
// again on the next later one.
//
// Buckets of keys, tenants, addresses and applications not seen for as
// long as a full bucket takes to refill are forgotten (a forgotten bucket
// is exactly a full one), so the memory they take is bounded by the
// callers active in that window.

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
	perKey, perTenant, authFailures, sessions *limiterSet
}

func newLimits(opts Options) limits {
	var l limits
	l.perKey = newLimiterSet(opts.Limits.RatePerKey, 1)
	l.perTenant = newLimiterSet(opts.Limits.RatePerTenant, 1)
	failures := float64(opts.Limits.AuthFailuresPerMinute)
	if opts.Limits.AuthFailuresPerMinute == 0 {
		failures = DefaultAuthFailuresPerMinute
	}
	l.authFailures = newLimiterSet(failures/60, 60)
	sessions := opts.Limits.SessionsPerApplication
	if sessions == 0 {
		sessions = DefaultSessionsPerApplication
	}
	l.sessions = newLimiterSet(sessions, SessionBurstSeconds)
	return l
}

// limiterSet is one token bucket (golang.org/x/time/rate) per name (a
// key's MAC, a tenant id, an address, an application and address).
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

// bucket is a limiter and the latest clock reading it was given: a
// rate.Limiter given an earlier reading than its latest takes it as its
// latest, and credits the same interval again on the next later one, so
// readings before last are given to it as last.
type bucket struct {
	l    *rate.Limiter
	last time.Time
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

// get returns the bucket of name, creating it full, with the clock reading
// to give it (now, or its latest if now is before that), and forgets idle
// buckets now and then. s.mu must be held.
func (s *limiterSet) get(name string, now time.Time) (*bucket, time.Time) {
	if now.Sub(s.lastEvict) >= s.idle {
		for n, b := range s.buckets {
			if now.Sub(b.last) >= s.idle {
				delete(s.buckets, n)
			}
		}
		s.lastEvict = now
	}
	b := s.buckets[name]
	if b == nil {
		b = &bucket{l: rate.NewLimiter(s.limit, s.burst), last: now}
		s.buckets[name] = b
	}
	if now.After(b.last) {
		b.last = now
	}
	return b, b.last
}

// wait is how long from now until b holds one event at its reading at.
func (s *limiterSet) wait(b *bucket, at, now time.Time) time.Duration {
	missing := 1 - b.l.TokensAt(at)
	// Past now: a bucket's clock may be ahead of this call's reading.
	return time.Duration(math.Ceil(missing/float64(s.limit)*float64(time.Second))) + max(at.Sub(now), 0)
}

// take takes one event from name's bucket, or reports how long until one
// is available (and takes nothing).
func (s *limiterSet) take(name string, now time.Time) (ok bool, retryAfter time.Duration) {
	if s == nil {
		return true, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, at := s.get(name, now)
	if b.l.AllowN(at, 1) {
		return true, 0
	}
	return false, s.wait(b, at, now)
}

// takeBoth takes one event from a's bucket an and one from b's bucket bn,
// or neither: a call refused by one limit is not charged to the other.
// Callers lock a before b, always in the same order (per key, then per
// tenant). It returns the set that refused, and how long until it would
// not.
func takeBoth(a *limiterSet, an string, b *limiterSet, bn string, now time.Time) (refused *limiterSet, retryAfter time.Duration) {
	type held struct {
		s  *limiterSet
		b  *bucket
		at time.Time
	}
	var hs []held
	for _, x := range []struct {
		s    *limiterSet
		name string
	}{{a, an}, {b, bn}} {
		if x.s == nil {
			continue
		}
		x.s.mu.Lock()
		defer x.s.mu.Unlock()
		bk, at := x.s.get(x.name, now)
		if bk.l.TokensAt(at) < 1 {
			return x.s, x.s.wait(bk, at, now)
		}
		hs = append(hs, held{x.s, bk, at})
	}
	for _, h := range hs {
		h.b.l.AllowN(h.at, 1) // each holds an event, under its set's lock
	}
	return nil, 0
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
// per-tenant limits, once per call (see CallInfo): a transaction function
// run again gets the first run's answer.
func (t *txn) chargeCall(mac []byte, p *principal) error {
	l := &t.v.limits
	if l.perKey == nil && l.perTenant == nil {
		return nil
	}
	info := unit.CallOf(t.Ctx)
	return info.Once(unit.ChargeCallLimits, func() error {
		key, tenant := string(mac), p.tenantID
		if p.actorType == ActorApplication && p.appType == Public {
			// A public key is in every browser: one bucket for all of
			// them would let any holder use up everyone's calls, so each
			// client address has its own (storage is bounded otherwise:
			// sessions_limits.go).
			addr := "\x00public\x00" + throttleAddress(info.ClientAddress)
			key, tenant = key+addr, tenant+addr
		}
		now := t.v.now()
		switch refused, wait := takeBoth(l.perKey, key, l.perTenant, tenant, now); refused {
		case nil:
			return nil
		case l.perKey:
			return errRateLimited("with this key", wait)
		default:
			return errRateLimited("for this tenant", wait)
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
		if ok, wait := v.limits.authFailures.take(throttleAddress(info.ClientAddress), v.now()); !ok {
			return errRateLimited("with keys that failed to authenticate from this address", wait)
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
		name := appID + "\x00" + throttleAddress(info.ClientAddress)
		if ok, wait := t.v.limits.sessions.take(name, t.v.now()); !ok {
			return errRateLimited("creating sessions with this application from this address", wait)
		}
		return nil
	})
}

// limiterSizes reports how many buckets each limit holds, for tests.
func (v *Vault) limiterSizes() map[string]int {
	return map[string]int{
		"key": v.limits.perKey.size(), "tenant": v.limits.perTenant.size(),
		"auth_failures": v.limits.authFailures.size(), "sessions": v.limits.sessions.size(),
	}
}
