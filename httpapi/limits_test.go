package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// boltStore opens a bolt store that group-commits concurrent writes,
// closed after the test (and after the Vault on it).
func boltStore(t *testing.T) store.Store {
	t.Helper()
	s, err := bolt.Open(filepath.Join(t.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// send makes one request under /vault with key and the header pairs, and
// returns its status (0 when it could not be sent).
func (s *server) send(method, path, key, body string, header ...string) int {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.srv.URL+"/vault"+path, rd)
	if err != nil {
		return 0
	}
	if key != "" {
		req.Header.Set("SVC-API-KEY", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// hammer sends n requests, concurrency at a time, and counts the statuses.
func hammer(n, concurrency int, send func(i int) int) map[int]int {
	var mu sync.Mutex
	counts := map[int]int{}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				status := send(i)
				mu.Lock()
				counts[status]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return counts
}

// TestLimitsHoldUnderConcurrencyOverHTTP: over HTTP, on a bolt store
// (which group-commits concurrent requests) and a clock that does not
// move, every limit admits exactly its burst at concurrency 1, 4 and 16.
func TestLimitsHoldUnderConcurrencyOverHTTP(t *testing.T) {
	t.Parallel()
	const burst, calls = 20, 60
	for _, tc := range []struct {
		name   string
		opts   func(*tokenvault.Options)
		setup  func(t *testing.T, s *server) func(i int) int
		within int
	}{
		{"per key", func(o *tokenvault.Options) { o.Limits.RatePerKey = burst }, func(t *testing.T, s *server) func(int) int {
			_, key := s.app(t, map[string]any{"name": "m", "type": "management", "permissions": []string{"tenant:read"}})
			return func(int) int { return s.send("GET", "/tenants/self", key, "") }
		}, http.StatusOK},
		{"per tenant", func(o *tokenvault.Options) { o.Limits.RatePerTenant = burst }, func(t *testing.T, s *server) func(int) int {
			_, a := s.app(t, map[string]any{"name": "a", "type": "management", "permissions": []string{"tenant:read"}})
			_, b := s.app(t, map[string]any{"name": "b", "type": "management", "permissions": []string{"tenant:read"}})
			keys := []string{a, b}
			return func(i int) int { return s.send("GET", "/tenants/self", keys[i%2], "") }
		}, http.StatusOK},
		{"failed authentications per address", func(o *tokenvault.Options) { o.Limits.AuthFailuresPerMinute = burst }, func(t *testing.T, s *server) func(int) int {
			return func(i int) int { return s.send("GET", "/tenants/self", fmt.Sprint("key_wrong_", i), "") }
		}, http.StatusUnauthorized},
		{"sessions per application and address", func(o *tokenvault.Options) { o.Limits.SessionsPerApplication = burst / tokenvault.SessionBurstSeconds }, func(t *testing.T, s *server) func(int) int {
			_, pub := s.app(t, map[string]any{"name": "p", "type": "public", "permissions": []string{"token:create"}})
			return func(int) int { return s.send("POST", "/sessions", pub, "") }
		}, http.StatusCreated},
	} {
		for _, c := range []int{1, 4, 16} {
			t.Run(fmt.Sprintf("%s/concurrency=%d", tc.name, c), func(t *testing.T) {
				clock := testfake.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
				st := boltStore(t)
				s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Store, o.Now = st, clock.Now; tc.opts(o) })
				send := tc.setup(t, s)
				clock.Advance(time.Hour) // every bucket full again after the setup
				counts := hammer(calls, c, send)
				if counts[tc.within] != burst || counts[http.StatusTooManyRequests] != calls-burst {
					t.Errorf("statuses %v, want %d %d and %d 429", counts, burst, tc.within, calls-burst)
				}
			})
		}
	}
}

// pendingEntries counts the index entries of sessions waiting for
// authorization in st.
func pendingEntries(t *testing.T, st store.Store) int {
	t.Helper()
	n := 0
	err := st.View(context.Background(), func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, _ []byte) error {
			if strings.Contains(string(k), "/idx/pending-session/") {
				n++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSessionFloodOverHTTP: 1,100 concurrent POST /sessions with one
// public key from one address (behind a trusted proxy) do not stop a
// creation from another address, nor an in-process one, during the flood
// or after it, and the sessions waiting stay bounded.
func TestSessionFloodOverHTTP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rate float64
		max  int
	}{
		{"default rate", 0, tokenvault.DefaultSessionsPerApplication * tokenvault.SessionBurstSeconds},
		{"no rate", -1, tokenvault.DefaultMaxPendingSessionsPerAddress},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := testfake.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
			st := boltStore(t)
			s := newServer(t, httpapi.Options{TrustForwardedFor: true}, func(o *tokenvault.Options) {
				o.Store, o.Now, o.Limits.SessionsPerApplication = st, clock.Now, tc.rate
			})
			_, pub := s.app(t, map[string]any{"name": "p", "type": "public", "permissions": []string{"token:create"}})
			done := make(chan map[int]int)
			go func() {
				done <- hammer(1100, 32, func(int) int { return s.send("POST", "/sessions", pub, "", "X-Forwarded-For", "203.0.113.66") })
			}()
			for i := range 3 {
				if got := s.send("POST", "/sessions", pub, "", "X-Forwarded-For", fmt.Sprint("198.51.100.", i+1)); got != http.StatusCreated {
					t.Errorf("a creation from another address during the flood = %d, want 201", got)
				}
				if _, err := s.v.CreateSession(context.Background(), tokenvault.Credential(pub)); err != nil {
					t.Errorf("an in-process creation during the flood: %v", err)
				}
			}
			counts := <-done
			if counts[http.StatusCreated] < tc.max || counts[http.StatusCreated]+counts[http.StatusTooManyRequests] != 1100 {
				t.Errorf("the flood's statuses %v, want at least %d 201 and the rest 429", counts, tc.max)
			}
			if got := s.send("POST", "/sessions", pub, "", "X-Forwarded-For", "198.51.100.9"); got != http.StatusCreated {
				t.Errorf("a creation from another address after the flood = %d, want 201", got)
			}
			if _, err := s.v.CreateSession(context.Background(), tokenvault.Credential(pub)); err != nil {
				t.Errorf("an in-process creation after the flood: %v", err)
			}
			if n := pendingEntries(t, st); n > tc.max+8 {
				t.Errorf("%d sessions waiting after the flood, want at most %d (the flood's) + 8", n, tc.max)
			}
		})
	}
}

// TestFailedAuthenticationsLockNobodyOut: the scenario with an
// -auth-failures-per-minute of 20: 30 wrong keys from one address, then
// the management key and an anonymous /proxy call from that address are
// served, and only further wrong keys are 429. Behind a trusted proxy,
// forwarded values that are not IP addresses count as the connection's
// address: 60 of them are throttled after 20.
func TestFailedAuthenticationsLockNobodyOut(t *testing.T) {
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok": true}`)
	}))
	defer dest.Close()
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Limits.AuthFailuresPerMinute = 20 })
	r := s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "destination_url": dest.URL, "require_auth": false})
	wantStatus(t, "POST /proxies", r, http.StatusCreated)
	var p tokenvault.Proxy
	r.json(t, &p)
	counts := hammer(30, 1, func(i int) int { return s.send("GET", "/tenants/self", fmt.Sprint("key_wrong_", i), "") })
	if counts[http.StatusUnauthorized] != 20 || counts[http.StatusTooManyRequests] != 10 {
		t.Errorf("30 wrong keys: statuses %v, want 20 401 and 10 429", counts)
	}
	wantStatus(t, "the management key from that address", s.do(t, "GET", "/tenants/self", s.mgmt, nil), http.StatusOK)
	wantStatus(t, "an anonymous /proxy call from that address", s.do(t, "POST", "/proxy", "", `{"a": 1}`, "SVC-PROXY-KEY", p.Key), http.StatusOK)
	wantStatus(t, "a wrong proxy key from that address", s.do(t, "POST", "/proxy", "", `{"a": 1}`, "SVC-PROXY-KEY", "wrong"), http.StatusTooManyRequests)
	wantStatus(t, "another wrong key", s.do(t, "GET", "/tenants/self", "key_wrong", nil), http.StatusTooManyRequests)

	x := newServer(t, httpapi.Options{TrustForwardedFor: true}, func(o *tokenvault.Options) { o.Limits.AuthFailuresPerMinute = 20 })
	counts = hammer(60, 1, func(i int) int {
		return x.send("GET", "/tenants/self", "key_wrong", "", "X-Forwarded-For", fmt.Sprint("not-an-ip-", i))
	})
	if counts[http.StatusUnauthorized] != 20 || counts[http.StatusTooManyRequests] != 40 {
		t.Errorf("60 forwarded values that are not addresses: statuses %v, want 20 401 and 40 429", counts)
	}
	wantStatus(t, "a wrong key from a forwarded address", x.do(t, "GET", "/tenants/self", "key_wrong", nil, "X-Forwarded-For", "203.0.113.5"), http.StatusUnauthorized)
	wantStatus(t, "a wrong key from the same address with a port", x.do(t, "GET", "/tenants/self", "key_wrong", nil, "X-Forwarded-For", "10.0.0.1, 203.0.113.5:4711"), http.StatusUnauthorized)
	wantStatus(t, "the management key with a made-up forwarded value", x.do(t, "GET", "/tenants/self", x.mgmt, nil, "X-Forwarded-For", "not-an-ip-61"), http.StatusOK)
}

// TestPublicKeyChargedPerAddressOverHTTP: a flood of one public key from
// one address uses up that address's per-key budget only.
func TestPublicKeyChargedPerAddressOverHTTP(t *testing.T) {
	clock := testfake.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newServer(t, httpapi.Options{TrustForwardedFor: true}, func(o *tokenvault.Options) {
		o.Store, o.Now, o.Limits.RatePerKey, o.Limits.SessionsPerApplication = boltStore(t), clock.Now, 20, -1
	})
	_, pub := s.app(t, map[string]any{"name": "p", "type": "public", "permissions": []string{"token:create"}})
	clock.Advance(time.Hour)
	counts := hammer(60, 16, func(int) int { return s.send("POST", "/sessions", pub, "", "X-Forwarded-For", "203.0.113.66") })
	if counts[http.StatusCreated] != 20 || counts[http.StatusTooManyRequests] != 40 {
		t.Errorf("60 creations from one address: statuses %v, want 20 201 and 40 429", counts)
	}
	wantStatus(t, "the public key from another address", s.do(t, "POST", "/sessions", pub, nil, "X-Forwarded-For", "198.51.100.1"), http.StatusCreated)
}
