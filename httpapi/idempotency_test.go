package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
)

// TestIdempotentRoutesAreServed: every route the Idempotency-Key applies
// to is a POST the handler serves, and every POST that creates something
// is among them.
func TestIdempotentRoutesAreServed(t *testing.T) {
	served := map[string]bool{}
	for _, p := range httpapi.Routes(httpapi.New(nil, httpapi.Options{})) {
		served[p] = true
	}
	for p := range httpapi.IdempotentRoutes() {
		if !served[p] || !strings.HasPrefix(p, "POST ") {
			t.Errorf("idempotent route %q is not a POST route the handler serves", p)
		}
	}
	// POSTs that create nothing, or that have no caller key (the
	// operator key is no tenant's caller).
	notCreating := map[string]bool{
		"POST /detokenize": true, "POST /tokens/search": true, "POST /tokens/access/search": true, "POST /sessions/authorize": true,
		"POST /tenants/invitations/accept": true, "POST /proxy": true, "POST /proxy/{rest...}": true,
		"POST /operator/tenants": true, "POST /fpe/encode": true, "POST /fpe/decode": true,
		"POST /applications/{id}/unfreeze": true, // releasing again changes nothing
		// An export's answer is the data, encrypted: never kept to be
		// replayed; a second call is a second export, with its own
		// manifest and audit line.
		"POST /tokens/export":               true,
		"POST /applications/preview-access": true, // a preview writes nothing
		// A batch sent again is idempotent by itself: each line whose
		// token it created counts skipped (and its body is larger than the
		// bodies the key's record holds).
		"POST /tokens/import": true,
	}
	for p := range served {
		if strings.HasPrefix(p, "POST ") && !notCreating[p] && !httpapi.IdempotentRoutes()[p] {
			t.Errorf("POST route %q takes no Idempotency-Key", p)
		}
	}
}

func countTokensHTTP(t *testing.T, s *server, key string) int {
	t.Helper()
	r := s.do(t, "GET", "/tokens", key, nil)
	wantStatus(t, "GET /tokens", r, 200)
	var page struct {
		Pagination struct {
			TotalItems int `json:"total_items"`
		} `json:"pagination"`
	}
	r.json(t, &page)
	return page.Pagination.TotalItems
}

// TestIdempotencyOverHTTP: a repeated creating POST with the same
// Idempotency-Key and body answers the first response (status and body)
// marked Idempotent-Replayed, and creates nothing more.
func TestIdempotencyOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, key := s.app(t, map[string]any{"name": "b", "type": "private", "permissions": []string{"token:create", "token:read"}})
	body := `{"type": "token", "data": "secret"}`
	first := s.do(t, "POST", "/tokens", key, body, "Idempotency-Key", "order-17")
	wantStatus(t, "first POST /tokens", first, http.StatusCreated)
	if first.header.Get(httpapi.ReplayedHeader) != "" {
		t.Errorf("first response is marked replayed")
	}
	again := s.do(t, "POST", "/tokens", key, body, "Idempotency-Key", "order-17")
	wantStatus(t, "repeated POST /tokens", again, http.StatusCreated)
	if !bytes.Equal(again.body, first.body) || again.header.Get("Content-Type") != first.header.Get("Content-Type") {
		t.Errorf("repeat answered %s (%s), want %s (%s)", again.body, again.header.Get("Content-Type"), first.body, first.header.Get("Content-Type"))
	}
	if again.header.Get(httpapi.ReplayedHeader) != "true" {
		t.Errorf("repeat is not marked %s", httpapi.ReplayedHeader)
	}
	if n := countTokensHTTP(t, s, key); n != 1 {
		t.Errorf("%d tokens after a repeat, want 1", n)
	}

	// Without the header, or with another key: a new token each time.
	wantStatus(t, "POST /tokens without a key", s.do(t, "POST", "/tokens", key, body), http.StatusCreated)
	wantStatus(t, "POST /tokens with another key", s.do(t, "POST", "/tokens", key, body, "Idempotency-Key", "order-18"), http.StatusCreated)
	if n := countTokensHTTP(t, s, key); n != 3 {
		t.Errorf("%d tokens, want 3", n)
	}

	// The same key with another body, or on another route: 422.
	r := s.do(t, "POST", "/tokens", key, `{"type": "token", "data": "other"}`, "Idempotency-Key", "order-17")
	wantStatus(t, "the same key with another body", r, http.StatusUnprocessableEntity)
	r.problem(t)
	r = s.do(t, "POST", "/tokenize", key, body, "Idempotency-Key", "order-17")
	wantStatus(t, "the same key on another route", r, http.StatusUnprocessableEntity)
	r.problem(t)

	// Another caller's same key is its own.
	_, other := s.app(t, map[string]any{"name": "o", "type": "private", "permissions": []string{"token:create", "token:read"}})
	r = s.do(t, "POST", "/tokens", other, body, "Idempotency-Key", "order-17")
	wantStatus(t, "another caller's same key", r, http.StatusCreated)
	if r.header.Get(httpapi.ReplayedHeader) != "" || bytes.Equal(r.body, first.body) {
		t.Errorf("another caller got the first caller's response")
	}

	// Malformed keys: 400.
	for _, k := range []string{strings.Repeat("k", 256), "caf\u00e9"} {
		r := s.do(t, "POST", "/tokens", key, body, "Idempotency-Key", k)
		wantStatus(t, "a malformed Idempotency-Key", r, http.StatusBadRequest)
		r.problem(t)
	}
	// An unknown API key: 401, nothing kept.
	r = s.do(t, "POST", "/tokens", "key_unknown", body, "Idempotency-Key", "order-17")
	wantStatus(t, "an unknown API key", r, http.StatusUnauthorized)
}

// TestIdempotencyKeepsClientErrors: a 4xx answer is kept like a success
// (the request would fail again the same way), a public application's
// requests are never replayed, and every route of the list works.
func TestIdempotencyKeepsClientErrors(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, key := s.app(t, map[string]any{"name": "b", "type": "private", "permissions": []string{"token:create"}})
	bad := `{"type": "nonsense", "data": "x"}`
	r1 := s.do(t, "POST", "/tokens", key, bad, "Idempotency-Key", "k")
	wantStatus(t, "an invalid token request", r1, http.StatusBadRequest)
	r2 := s.do(t, "POST", "/tokens", key, bad, "Idempotency-Key", "k")
	wantStatus(t, "its repeat", r2, http.StatusBadRequest)
	if r2.header.Get(httpapi.ReplayedHeader) != "true" || !bytes.Equal(r1.body, r2.body) {
		t.Errorf("the 400 was not kept: replayed %q, %s vs %s", r2.header.Get(httpapi.ReplayedHeader), r2.body, r1.body)
	}
	r2.problem(t)

	_, pub := s.app(t, map[string]any{"name": "p", "type": "public", "permissions": []string{"token:create"}})
	s1 := s.do(t, "POST", "/sessions", pub, nil, "Idempotency-Key", "s")
	wantStatus(t, "POST /sessions", s1, http.StatusCreated)
	// Another end user of the same public key, with the same
	// Idempotency-Key, gets a session of its own, not the first one's key.
	s2 := s.do(t, "POST", "/sessions", pub, nil, "Idempotency-Key", "s")
	if s2.status != http.StatusCreated || bytes.Equal(s1.body, s2.body) || s2.header.Get(httpapi.ReplayedHeader) != "" {
		t.Errorf("repeated POST /sessions with a public key = %d %s (replayed %q), want a new session, not %s",
			s2.status, s2.body, s2.header.Get(httpapi.ReplayedHeader), s1.body)
	}

	a1 := s.do(t, "POST", "/applications", s.mgmt, map[string]any{"name": "x", "type": "private", "permissions": []string{"token:read"}}, "Idempotency-Key", "a")
	a2 := s.do(t, "POST", "/applications", s.mgmt, map[string]any{"name": "x", "type": "private", "permissions": []string{"token:read"}}, "Idempotency-Key", "a")
	wantStatus(t, "POST /applications", a1, http.StatusCreated)
	if a2.status != http.StatusCreated || !bytes.Equal(a1.body, a2.body) {
		t.Errorf("repeated POST /applications = %d, want the first application", a2.status)
	}
	apps, err := s.v.ListApplications(context.Background(), tokenvault.Credential(s.mgmt), tokenvault.ListApplicationsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if n := apps.Pagination.TotalItems; n != 4 { // management, b, p, x
		t.Errorf("%d applications, want 4", n)
	}
}

// TestIdempotencyInProgressOverHTTP: a repeat while the first request
// still runs is 409.
func TestIdempotencyInProgressOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, key := s.app(t, map[string]any{"name": "b", "type": "private", "permissions": []string{"token:create"}})
	body := `{"a": "b"}`
	started, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		// The same caller, key, operation and body as the HTTP request
		// below, claimed in-process and held.
		s.v.Idempotent(context.Background(), tokenvault.Credential(key), "held", tokenvault.IdempotentRequest{Operation: "POST /tokenize application/json", Body: []byte(body)},
			func(context.Context) (*tokenvault.IdempotentResponse, error) {
				close(started)
				<-release
				return &tokenvault.IdempotentResponse{Status: 201, Header: map[string][]string{"Content-Type": {"application/json"}}, Body: []byte(`{"a":"id"}`)}, nil
			})
	})
	<-started
	r := s.do(t, "POST", "/tokenize", key, body, "Idempotency-Key", "held")
	wantStatus(t, "a repeat while the first runs", r, http.StatusConflict)
	r.problem(t)
	close(release)
	wg.Wait()
	r = s.do(t, "POST", "/tokenize", key, body, "Idempotency-Key", "held")
	wantStatus(t, "a repeat once it finished", r, http.StatusCreated)
	if string(r.body) != `{"a":"id"}` || r.header.Get(httpapi.ReplayedHeader) != "true" {
		t.Errorf("repeat = %s (replayed %q), want the held response", r.body, r.header.Get(httpapi.ReplayedHeader))
	}
}

// TestRateLimitsOverHTTP: over a limit the answer is 429 problem+json with
// Retry-After in whole seconds, rounded up.
func TestRateLimitsOverHTTP(t *testing.T) {
	clock := testfake.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Now, o.Limits.RatePerKey = clock.Now, 0.25 })
	_, key := s.app(t, map[string]any{"name": "b", "type": "private", "permissions": []string{"token:create"}})
	wantStatus(t, "the first call", s.do(t, "POST", "/tokenize", key, `{"a": "b"}`), http.StatusCreated)
	r := s.do(t, "POST", "/tokenize", key, `{"a": "b"}`)
	wantStatus(t, "a second call", r, http.StatusTooManyRequests)
	r.problem(t)
	if got := r.header.Get("Retry-After"); got != "4" {
		t.Errorf("Retry-After = %q, want 4 (a quarter call a second)", got)
	}
	clock.Advance(3500 * time.Millisecond)
	r = s.do(t, "POST", "/tokenize", key, `{"a": "b"}`)
	wantStatus(t, "half a second early", r, http.StatusTooManyRequests)
	if got := r.header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want 1 (half a second, rounded up)", got)
	}
	clock.Advance(500 * time.Millisecond)
	wantStatus(t, "four seconds later", s.do(t, "POST", "/tokenize", key, `{"a": "b"}`), http.StatusCreated)
}

// TestAuthFailuresOverHTTP: failed authentications are counted per
// client address (the connection's, X-Forwarded-For ignored unless
// trusted); past the limit further failures are 429, and a valid key is
// still served.
func TestAuthFailuresOverHTTP(t *testing.T) {
	clock := testfake.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Now, o.Limits.AuthFailuresPerMinute = clock.Now, 2 })
	for i := range 2 {
		// A spoofed X-Forwarded-For changes nothing.
		r := s.do(t, "GET", "/tenants/self", "key_wrong", nil, "X-Forwarded-For", "203.0.113."+string(rune('1'+i)))
		wantStatus(t, "a wrong key", r, http.StatusUnauthorized)
	}
	wantStatus(t, "a valid key after two failures", s.do(t, "GET", "/tenants/self", s.mgmt, nil), http.StatusOK)
	r := s.do(t, "GET", "/tenants/self", "key_wrong", nil)
	wantStatus(t, "a third wrong key", r, http.StatusTooManyRequests)
	r.problem(t)
	if got := r.header.Get("Retry-After"); got != "30" {
		t.Errorf("Retry-After = %q, want 30", got)
	}
	clock.Advance(30 * time.Second)
	wantStatus(t, "a wrong key 30 s later", s.do(t, "GET", "/tenants/self", "key_wrong", nil), http.StatusUnauthorized)

	// Behind a trusted proxy, the forwarded address counts.
	clock2 := testfake.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	p := newServer(t, httpapi.Options{TrustForwardedFor: true}, func(o *tokenvault.Options) { o.Now, o.Limits.AuthFailuresPerMinute = clock2.Now, 1 })
	wantStatus(t, "a wrong key from A", p.do(t, "GET", "/tenants/self", "key_wrong", nil, "X-Forwarded-For", "10.0.0.1, 203.0.113.1"), http.StatusUnauthorized)
	wantStatus(t, "A again", p.do(t, "GET", "/tenants/self", "key_wrong", nil, "X-Forwarded-For", "203.0.113.1"), http.StatusTooManyRequests)
	wantStatus(t, "B", p.do(t, "GET", "/tenants/self", "key_wrong", nil, "X-Forwarded-For", "203.0.113.2"), http.StatusUnauthorized)
	wantStatus(t, "a valid key from A", p.do(t, "GET", "/tenants/self", p.mgmt, nil, "X-Forwarded-For", "203.0.113.1"), http.StatusOK)
}

// TestSessionLimitsOverHTTP: past its session rate a public application's
// POST /sessions is 429 with Retry-After.
func TestSessionLimitsOverHTTP(t *testing.T) {
	clock := testfake.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Now, o.Limits.SessionsPerApplication = clock.Now, 0.2 })
	_, pub := s.app(t, map[string]any{"name": "p", "type": "public", "permissions": []string{"token:create"}})
	for range tokenvault.SessionBurstSeconds / 5 { // 0.2 a second: a burst of 2
		wantStatus(t, "a session within the burst", s.do(t, "POST", "/sessions", pub, nil), http.StatusCreated)
	}
	r := s.do(t, "POST", "/sessions", pub, nil)
	wantStatus(t, "a session past the burst", r, http.StatusTooManyRequests)
	r.problem(t)
	if got := r.header.Get("Retry-After"); got != "5" {
		t.Errorf("Retry-After = %q, want 5", got)
	}
}

// TestIdempotencyFollowsGrants: a repeat is answered only while the
// caller holds the grants it held the first time: a key that lost
// application:update does not go on getting the key its regenerate made.
func TestIdempotencyFollowsGrants(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	m2ID, m2 := s.app(t, map[string]any{"name": "m2", "type": "management", "permissions": []string{"application:update", "application:read"}})
	xID, _ := s.app(t, map[string]any{"name": "x", "type": "private", "permissions": []string{"token:read"}})
	first := s.do(t, "POST", "/applications/"+xID+"/regenerate", m2, nil, "Idempotency-Key", "q")
	wantStatus(t, "regenerate", first, http.StatusOK)
	again := s.do(t, "POST", "/applications/"+xID+"/regenerate", m2, nil, "Idempotency-Key", "q")
	if again.status != http.StatusOK || !bytes.Equal(again.body, first.body) || again.header.Get(httpapi.ReplayedHeader) != "true" {
		t.Errorf("a repeat with the same grants = %d %s, want the first answer replayed", again.status, again.body)
	}
	r := s.do(t, "PUT", "/applications/"+m2ID, s.mgmt, map[string]any{"name": "m2", "permissions": []string{"log:read"}})
	wantStatus(t, "taking application:update away", r, http.StatusOK)
	r = s.do(t, "POST", "/applications/"+xID+"/regenerate", m2, nil, "Idempotency-Key", "q")
	wantStatus(t, "a repeat after the grants changed", r, http.StatusUnprocessableEntity)
	if strings.Contains(string(r.body), "key_") {
		t.Errorf("the refused repeat holds a key: %s", r.body)
	}
	r = s.do(t, "POST", "/applications/"+xID+"/regenerate", m2, nil, "Idempotency-Key", "q2")
	wantStatus(t, "a new Idempotency-Key under the grants as they are", r, http.StatusForbidden)
}
