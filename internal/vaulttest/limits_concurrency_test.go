package vaulttest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestLimitsHoldUnderConcurrency: on a clock that does not move, every
// limit (per key, per tenant, failed authentications per address,
// sessions per application and address) admits exactly its burst, at
// concurrency 1, 4 and 16, on every store: a transaction function that the
// store runs again (group commit runs a failed one again alone) is neither
// charged twice nor let through after a refusal.
func TestLimitsHoldUnderConcurrency(t *testing.T) {
	const burst, calls = 20, 60
	type limiter struct {
		name string
		opts func(*tokenvault.Options)
		// setup returns the call to make, and the answer (besides
		// RateLimited) of the calls within the burst.
		setup func(t *testing.T, e *vaulttest.Env) (call func(i int) error, within string)
	}
	limiters := []limiter{
		{"per key", func(o *tokenvault.Options) { o.Limits.RatePerKey = burst }, func(t *testing.T, e *vaulttest.Env) (func(int) error, string) {
			key := e.App(t, tokenvault.Management, "tenant:read").Key
			return func(i int) error { _, err := e.V.GetTenant(vaulttest.From("192.0.2.1"), key); return err }, "ok"
		}},
		{"per tenant", func(o *tokenvault.Options) { o.Limits.RatePerTenant = burst }, func(t *testing.T, e *vaulttest.Env) (func(int) error, string) {
			keys := []tokenvault.Credential{e.App(t, tokenvault.Management, "tenant:read").Key, e.App(t, tokenvault.Management, "tenant:read").Key}
			e.Clock.Advance(time.Second) // refill what creating them took
			return func(i int) error { _, err := e.V.GetTenant(vaulttest.From("192.0.2.1"), keys[i%2]); return err }, "ok"
		}},
		{"failed authentications per address", func(o *tokenvault.Options) { o.Limits.AuthFailuresPerMinute = burst }, func(t *testing.T, e *vaulttest.Env) (func(int) error, string) {
			return func(i int) error {
					_, err := e.V.GetTenant(vaulttest.From("192.0.2.1"), tokenvault.Credential(fmt.Sprint("key_wrong_", i)))
					return err
				},
				tokenvault.Unauthenticated.String()
		}},
		{"sessions per application and address", func(o *tokenvault.Options) { o.Limits.SessionsPerApplication = burst / tokenvault.SessionBurstSeconds }, func(t *testing.T, e *vaulttest.Env) (func(int) error, string) {
			pub := e.App(t, tokenvault.Public, "token:create").Key
			return func(i int) error { _, err := e.V.CreateSession(vaulttest.From("192.0.2.1"), pub); return err }, "ok"
		}},
	}
	for _, sk := range vaulttest.StoreKinds {
		for _, l := range limiters {
			for _, c := range []int{1, 4, 16} {
				t.Run(fmt.Sprintf("store=%s/%s/concurrency=%d", sk.Name, l.name, c), func(t *testing.T) {
					e := vaulttest.NewEnvOn(t, sk.Open(t), l.opts)
					call, within := l.setup(t, e)
					counts := vaulttest.Hammer(t, calls, c, call, tokenvault.RateLimited, tokenvault.Unauthenticated)
					if counts[within] != burst || counts[tokenvault.RateLimited.String()] != calls-burst {
						t.Errorf("answers %v, want %d %s and %d RateLimited", counts, burst, within, calls-burst)
					}
					// A second later the bucket has refilled by exactly a
					// second's worth.
					e.Clock.Advance(time.Second)
					perSecond := burst
					if l.name == "failed authentications per address" {
						perSecond = burst / 60
					}
					if l.name == "sessions per application and address" {
						perSecond = burst / tokenvault.SessionBurstSeconds
					}
					counts = vaulttest.Hammer(t, calls, c, call, tokenvault.RateLimited, tokenvault.Unauthenticated)
					if counts[within] != perSecond {
						t.Errorf("a second later: answers %v, want %d %s", counts, perSecond, within)
					}
				})
			}
		}
	}
}

// TestLimitClockNeverGoesBack: calls whose clock readings step back and
// forth by 10 ms (as concurrent calls' readings reach a limiter out of
// order) credit a bucket those 10 ms once, not at every step forward.
func TestLimitClockNeverGoesBack(t *testing.T) {
	e := vaulttest.NewEnvOn(t, vaulttest.StoreKinds[0].Open(t), func(o *tokenvault.Options) { o.Limits.RatePerKey = 100 })
	key := e.App(t, tokenvault.Management, "tenant:read").Key
	e.Clock.Advance(time.Second) // refill what creating it took
	counts := vaulttest.Hammer(t, 400, 1, func(i int) error {
		// Every other call reads the clock 10 ms later.
		if i%2 == 0 {
			e.Clock.Advance(10 * time.Millisecond)
		} else {
			e.Clock.Advance(-10 * time.Millisecond)
		}
		_, err := e.V.GetTenant(context.Background(), key)
		return err
	}, tokenvault.RateLimited)
	// 100 at once, plus one for the 10 ms.
	if counts["ok"] > 101 {
		t.Errorf("answers %v, want at most 101 successes", counts)
	}
}

// TestAuthFailureAddresses: a client address that is not an IP address is
// no new address (every such value shares one bucket), an IPv6 address
// counts as its /64, and an IPv4-mapped address as the IPv4 one; a key
// that authenticates is served from any of them.
func TestAuthFailureAddresses(t *testing.T) {
	e := vaulttest.NewEnvOn(t, vaulttest.StoreKinds[0].Open(t), func(o *tokenvault.Options) { o.Limits.AuthFailuresPerMinute = 20 })
	wrong := func(addr string) error { _, err := e.V.GetTenant(vaulttest.From(addr), "key_wrong"); return err }
	for _, tc := range []struct {
		name  string
		addrs func(i int) string
	}{
		{"values that are not IP addresses", func(i int) string { return fmt.Sprint("not-an-ip-", i) }},
		{"addresses of one IPv6 /64", func(i int) string { return fmt.Sprintf("2001:db8:1:2::%x", i+1) }},
		{"an IPv4 address, mapped or not, with a port or not", func(i int) string {
			return []string{"192.0.2.44", "::ffff:192.0.2.44", "192.0.2.44:1234", "[::ffff:192.0.2.44]:80"}[i%4]
		}},
	} {
		counts := vaulttest.Hammer(t, 60, 1, func(i int) error { return wrong(tc.addrs(i)) }, tokenvault.Unauthenticated, tokenvault.RateLimited)
		if counts[tokenvault.Unauthenticated.String()] != 20 || counts[tokenvault.RateLimited.String()] != 40 {
			t.Errorf("60 wrong keys from %s: answers %v, want 20 Unauthenticated and 40 RateLimited", tc.name, counts)
		}
		if _, err := e.V.GetTenant(vaulttest.From(tc.addrs(99)), e.Mgmt); err != nil {
			t.Errorf("a valid key from %s: %v", tc.name, err)
		}
	}
	vaulttest.WantKind(t, "another IPv6 /64", wrong("2001:db8:1:3::1"), tokenvault.Unauthenticated)
	vaulttest.WantKind(t, "another IPv4 address", wrong("192.0.2.45"), tokenvault.Unauthenticated)
}

// TestPublicKeyChargedPerAddress: a public application's key is every
// browser's, so its calls are charged per client address against both
// the per-key and the per-tenant limits: a flood from one address leaves
// the key usable from others, and the tenant's other keys untouched.
func TestPublicKeyChargedPerAddress(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts func(*tokenvault.Options)
	}{
		{"per key", func(o *tokenvault.Options) { o.Limits.RatePerKey = 20 }},
		{"per tenant", func(o *tokenvault.Options) { o.Limits.RatePerTenant = 20 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := vaulttest.NewEnvOn(t, vaulttest.StoreKinds[1].Open(t), func(o *tokenvault.Options) { o.Limits.SessionsPerApplication = -1; tc.opts(o) })
			pub := e.App(t, tokenvault.Public, "token:create").Key
			e.Clock.Advance(time.Second) // refill what creating it took
			counts := vaulttest.Hammer(t, 60, 16, func(int) error { _, err := e.V.CreateSession(vaulttest.From("203.0.113.66"), pub); return err }, tokenvault.RateLimited)
			if counts["ok"] != 20 {
				t.Errorf("60 creations from one address: answers %v, want 20 ok", counts)
			}
			if _, err := e.V.CreateSession(vaulttest.From("198.51.100.1"), pub); err != nil {
				t.Errorf("the public key from another address: %v", err)
			}
			if _, err := e.V.GetTenant(vaulttest.From("203.0.113.66"), e.Mgmt); err != nil {
				t.Errorf("the tenant's management key from the flooding address: %v", err)
			}
		})
	}
}
