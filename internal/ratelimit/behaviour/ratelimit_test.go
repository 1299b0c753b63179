// Package ratelimit_test holds the behaviour tests of the rate and concurrency
// limits, through a Vault's public methods (internal/vaulttest). They sit in a
// directory of their own, beside internal/ratelimit, whose unit tests are in
// package ratelimit: a directory holding both would compile the root and every
// package between it and internal/ratelimit a second time for its test binary.
package ratelimit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestRatePerKey: a key gets RatePerKey calls a second (burst one second's
// worth), on the Vault's clock; another key has its own bucket.
func TestRatePerKey(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Limits.RatePerKey = 2 })
	ctx := context.Background()
	a, b := e.App(t, tokenvault.Private, "token:create"), e.App(t, tokenvault.Private, "token:create")
	create := func(key tokenvault.Credential) error {
		_, err := e.V.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "token", Data: "x"})
		return err
	}
	for i := range 2 {
		if err := create(a.Key); err != nil {
			t.Fatalf("call %d within the burst: %v", i, err)
		}
	}
	vaulttest.WantRateLimited(t, "a third call in the same instant", create(a.Key), 500*time.Millisecond)
	if err := create(b.Key); err != nil {
		t.Errorf("another key: %v", err)
	}
	e.Clock.Advance(500 * time.Millisecond)
	if err := create(a.Key); err != nil {
		t.Errorf("after half a second: %v", err)
	}
	vaulttest.WantRateLimited(t, "and once more", create(a.Key), 500*time.Millisecond)
}

// TestRatePerTenant: all keys of a tenant share RatePerTenant; another
// tenant does not.
func TestRatePerTenant(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Limits.RatePerTenant = 3 })
	ctx := context.Background()
	keys := []tokenvault.Credential{e.App(t, tokenvault.Private, "token:create").Key, e.App(t, tokenvault.Private, "token:create").Key}
	// Creating the applications used two calls of the management key.
	e.Clock.Advance(time.Second)
	for i := range 3 {
		if _, err := e.V.CreateToken(ctx, keys[i%2], tokenvault.TokenRequest{Type: "token", Data: "x"}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	_, err := e.V.CreateToken(ctx, keys[1], tokenvault.TokenRequest{Type: "token", Data: "x"})
	vaulttest.WantRateLimited(t, "a fourth call of the tenant", err, time.Second)
	other := e.Tenant(t, "Other")
	if _, err := e.V.GetTenant(ctx, other.Application.Key); err != nil {
		t.Errorf("another tenant: %v", err)
	}
}

// TestRateChargedOncePerCall: a call is charged once, however many
// transactions it runs: Idempotent and the operation it runs are one call.
func TestRateChargedOncePerCall(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Limits.RatePerKey = 1 })
	app := e.App(t, tokenvault.Private, "token:create", "token:read")
	runs := 0
	if _, _, err := vaulttest.IdemTokenize(t, e.V, app.Key, "k", "v", &runs); err != nil {
		t.Fatalf("Idempotent running Tokenize with a limit of one call: %v", err)
	}
	_, _, err := vaulttest.IdemTokenize(t, e.V, app.Key, "k2", "v", &runs)
	vaulttest.WantRateLimited(t, "a second call", err, time.Second)
	// One CallInfo per call: a reused one is charged once.
	var info tokenvault.CallInfo
	ctx := tokenvault.WithCallInfo(context.Background(), &info)
	e.Clock.Advance(time.Second)
	for i := range 3 {
		if _, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"}); err != nil {
			t.Errorf("call %d with one CallInfo: %v", i, err)
		}
	}
}

// TestAuthFailuresThrottled: past AuthFailuresPerMinute failed
// authentications from one address, its further failures are RateLimited;
// a valid key from that address is never refused, other addresses and
// in-process callers without an address are not throttled.
func TestAuthFailuresThrottled(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Limits.AuthFailuresPerMinute = 3 })
	from := func(addr string) context.Context {
		return tokenvault.WithCallInfo(context.Background(), &tokenvault.CallInfo{ClientAddress: addr})
	}
	for i := range 3 {
		_, err := e.V.GetTenant(from("203.0.113.9"), tokenvault.Credential(fmt.Sprintf("key_wrong_%d", i)))
		vaulttest.WantKind(t, "a wrong key", err, tokenvault.Unauthenticated)
	}
	_, err := e.V.GetTenant(from("203.0.113.9"), "key_wrong")
	vaulttest.WantRateLimited(t, "a fourth wrong key", err, 20*time.Second)
	if _, err := e.V.GetTenant(from("203.0.113.9"), e.Mgmt); err != nil {
		t.Errorf("a valid key from the throttled address: %v", err)
	}
	_, err = e.V.GetTenant(from("203.0.113.9"), "")
	vaulttest.WantRateLimited(t, "no key from the throttled address", err, 20*time.Second)
	_, err = e.V.GetTenant(from("198.51.100.7"), "key_wrong")
	vaulttest.WantKind(t, "a wrong key from another address", err, tokenvault.Unauthenticated)
	for i := range 5 {
		_, err := e.V.GetTenant(context.Background(), "key_wrong")
		vaulttest.WantKind(t, fmt.Sprintf("in-process wrong key %d", i), err, tokenvault.Unauthenticated)
	}
	// One failure refills every 20 s.
	e.Clock.Advance(20 * time.Second)
	_, err = e.V.GetTenant(from("203.0.113.9"), "key_wrong")
	vaulttest.WantKind(t, "a wrong key after 20 s", err, tokenvault.Unauthenticated)
	_, err = e.V.GetTenant(from("203.0.113.9"), "key_wrong")
	vaulttest.WantRateLimited(t, "and another", err, 20*time.Second)
	if _, err := e.V.GetTenant(from("203.0.113.9"), e.Mgmt); err != nil {
		t.Errorf("the valid key again: %v", err)
	}
}

// TestSessionsPerApplication: one public application creates at most
// SessionsPerApplication sessions a second, with SessionBurstSeconds'
// worth at once; the library default is not unlimited.
func TestSessionsPerApplication(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		rate  float64
		burst int
	}{
		{"default", 0, tokenvault.DefaultSessionsPerApplication * tokenvault.SessionBurstSeconds},
		{"one a second", 1, tokenvault.SessionBurstSeconds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Limits.SessionsPerApplication = tc.rate })
			pub, other := e.App(t, tokenvault.Public, "token:create"), e.App(t, tokenvault.Public, "token:create")
			for i := range tc.burst {
				if _, err := e.V.CreateSession(ctx, pub.Key); err != nil {
					t.Fatalf("session %d within the burst: %v", i, err)
				}
			}
			_, err := e.V.CreateSession(ctx, pub.Key)
			vaulttest.WantRateLimited(t, "a session past the burst", err, time.Second)
			if _, err := e.V.CreateSession(ctx, other.Key); err != nil {
				t.Errorf("another public application: %v", err)
			}
			e.Clock.Advance(time.Second)
			if _, err := e.V.CreateSession(ctx, pub.Key); err != nil {
				t.Errorf("a second later: %v", err)
			}
		})
	}
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Limits.SessionsPerApplication = -1 })
	pub := e.App(t, tokenvault.Public, "token:create")
	for i := range 200 {
		if _, err := e.V.CreateSession(ctx, pub.Key); err != nil {
			t.Fatalf("session %d with no limit: %v", i, err)
		}
	}
}

// TestLimitersForgetIdleBuckets: buckets of keys, tenants and addresses
// not seen for as long as a bucket takes to refill are dropped, so keys
// never seen again do not stay in memory.
func TestLimitersForgetIdleBuckets(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) {
		o.Limits.RatePerKey, o.Limits.RatePerTenant, o.Limits.AuthFailuresPerMinute = 10, 100, 10
	})
	ctx := context.Background()
	for i := range 50 {
		boot := e.Tenant(t, fmt.Sprint("T", i))
		if _, err := e.V.GetTenant(ctx, boot.Application.Key); err != nil {
			t.Fatal(err)
		}
		e.V.GetTenant(tokenvault.WithCallInfo(ctx, &tokenvault.CallInfo{ClientAddress: fmt.Sprint("192.0.2.", i)}), "key_wrong")
		pub, err := e.V.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
			Name: "p", Type: tokenvault.Public, Permissions: []string{"token:create"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.V.CreateSession(ctx, pub.Key); err != nil {
			t.Fatal(err)
		}
	}
	sizes := vaulttest.LimiterSizes(e.V)
	for _, name := range []string{"key", "tenant", "auth_failures", "sessions"} {
		if sizes[name] < 50 {
			t.Fatalf("%s buckets = %d before going idle, want at least 50", name, sizes[name])
		}
	}
	// A minute later (every bucket full again), one call forgets the rest.
	e.Clock.Advance(time.Minute)
	if _, err := e.V.GetTenant(ctx, e.Mgmt); err != nil {
		t.Fatal(err)
	}
	e.V.GetTenant(tokenvault.WithCallInfo(ctx, &tokenvault.CallInfo{ClientAddress: "192.0.2.250"}), "key_wrong")
	pub := e.App(t, tokenvault.Public, "token:create")
	if _, err := e.V.CreateSession(ctx, pub.Key); err != nil {
		t.Fatal(err)
	}
	sizes = vaulttest.LimiterSizes(e.V)
	for _, name := range []string{"key", "tenant", "auth_failures", "sessions"} {
		if sizes[name] > 2 {
			t.Errorf("%s buckets = %d after a minute idle, want at most 2", name, sizes[name])
		}
	}
}

// TestPendingSessionsCapped: one public application has at most
// MaxPendingSessionsPerAddress live sessions waiting for authorization
// from one address and MaxPendingSessionsPerApplication in all; a creation
// past its address's cap evicts that address's oldest waiting one; a
// creation past the application's ceiling is refused (RateLimited, with
// RetryAfter), evicting no one; authorizing or expiring one makes room,
// and the indexes that count them are cleaned up with the sessions.
func TestPendingSessionsCapped(t *testing.T) {
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) { testPendingSessionsCapped(t, sk) })
	}
}

func testPendingSessionsCapped(t *testing.T, sk vaulttest.StoreKind) {
	s := sk.Open(t)
	e2 := vaulttest.NewEnvOn(t, s, func(o *tokenvault.Options) {
		o.Limits.SessionsPerApplication, o.Limits.MaxPendingSessionsPerApplication, o.Limits.MaxPendingSessionsPerAddress = -1, 4, 3
	})
	ctx := context.Background()
	pub, other := e2.App(t, tokenvault.Public, "token:create"), e2.App(t, tokenvault.Public, "token:create")
	authz := e2.App(t, tokenvault.Private, "token:read")
	authorize := func(nonce string) error {
		return e2.V.AuthorizeSession(ctx, authz.Key, tokenvault.AuthorizeSessionRequest{Nonce: nonce, Permissions: []string{"token:read"}})
	}
	create := func(what, addr string) string {
		t.Helper()
		s, err := e2.V.CreateSession(vaulttest.From(addr), pub.Key)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		e2.Clock.Advance(time.Second)
		return s.Nonce
	}
	var a []string
	for i := range 4 {
		a = append(a, create(fmt.Sprint("session ", i, " from A"), "192.0.2.1"))
	}
	// A's fourth evicted A's first: A waits with three.
	vaulttest.WantKind(t, "authorizing A's evicted first session", authorize(a[0]), tokenvault.Invalid)
	b := create("a session from B", "192.0.2.2")
	// The application has four waiting (A's three, B's one): the next
	// from C is refused until one is authorized or expires; nobody's
	// session is evicted for it.
	_, err := e2.V.CreateSession(vaulttest.From("192.0.2.3"), pub.Key)
	vaulttest.WantKind(t, "a session from C past the application's ceiling", err, tokenvault.RateLimited)
	var te *tokenvault.Error
	if vaulttest.AsError(err, &te); te.RetryAfter <= 0 || te.RetryAfter > tokenvault.SessionLifetime {
		t.Errorf("RetryAfter = %v, want until the oldest waiting session expires", te.RetryAfter)
	}
	for _, n := range []string{a[1], a[2], a[3], b} {
		if err := authorize(n); err != nil {
			t.Errorf("authorizing a session still waiting: %v", err)
		}
	}
	c := create("a session from C once the others were authorized", "192.0.2.3")
	if _, err := e2.V.CreateSession(ctx, other.Key); err != nil {
		t.Errorf("another application: %v", err)
	}
	if perApp, perAddress := vaulttest.PendingEntries(t, s); perApp != 2 || perAddress != 2 {
		t.Errorf("%d waiting (%d by address), want 2 (C's and the other application's)", perApp, perAddress)
	}
	e2.Clock.Advance(tokenvault.SessionLifetime)
	vaulttest.WantKind(t, "authorizing C's expired session", authorize(c), tokenvault.Invalid)
	create("after they expired", "192.0.2.3")
	e2.Clock.Advance(time.Hour)
	if _, err := e2.V.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if perApp, perAddress := vaulttest.PendingEntries(t, s); perApp+perAddress != 0 {
		t.Errorf("%d pending index entries left after every session was swept", perApp+perAddress)
	}
}

// TestWrongProxyKeysThrottled: unknown proxy keys count as failed
// authentications of the caller's address.
func TestWrongProxyKeysThrottled(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Limits.AuthFailuresPerMinute = 2 })
	ctx := tokenvault.WithCallInfo(context.Background(), &tokenvault.CallInfo{ClientAddress: "203.0.113.5"})
	call := func() error {
		_, err := e.V.InvokeProxy(tokenvault.WithCallInfo(context.Background(), &tokenvault.CallInfo{ClientAddress: "203.0.113.5"}),
			tokenvault.ProxyCall{ProxyKey: "wrong", Method: "POST"})
		return err
	}
	for range 2 {
		vaulttest.WantKind(t, "an unknown proxy key", call(), tokenvault.Unauthenticated)
	}
	vaulttest.WantRateLimited(t, "a third unknown proxy key", call(), 30*time.Second)
	_, err := e.V.GetTenant(ctx, "key_wrong")
	vaulttest.WantRateLimited(t, "a wrong API key from the same address", err, 30*time.Second)
	if _, err := e.V.GetTenant(ctx, e.Mgmt); err != nil {
		t.Errorf("a valid API key from the same address: %v", err)
	}
}
