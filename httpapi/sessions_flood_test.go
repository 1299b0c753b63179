package httpapi_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
)

// TestSessionFloodFromManyAddressesOverHTTP: POST /sessions from
// addresses A..Z (behind a trusted proxy; 20 each, cap 5 per address, a
// ceiling of 60 the flood fills) never removes a victim's session waiting
// for authorization: past the ceiling the flood is 429 with Retry-After
// and a problem, not a 201 that evicted someone; the victim's session is
// still authorized (204) and then reads. With the ceiling above the
// flood's share every creation is 201.
func TestSessionFloodFromManyAddressesOverHTTP(t *testing.T) {
	t.Parallel()
	const victim = "198.51.100.7"
	for _, ceiling := range []int{0, 60} {
		t.Run(fmt.Sprint("ceiling=", ceiling), func(t *testing.T) {
			clock := testfake.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
			st := boltStore(t)
			s := newServer(t, httpapi.Options{TrustForwardedFor: true}, func(o *tokenvault.Options) {
				o.Store, o.Now = st, clock.Now
				o.Limits.SessionsPerApplication = -1
				o.Limits.MaxPendingSessionsPerAddress, o.Limits.MaxPendingSessionsPerApplication = 5, ceiling
			})
			_, public := s.app(t, map[string]any{"name": "web", "type": "public", "permissions": []string{"token:create"}})
			_, private := s.app(t, map[string]any{"name": "backend", "type": "private", "permissions": []string{"token:read"}})
			r := s.do(t, "POST", "/sessions", public, nil, "X-Forwarded-For", victim)
			wantStatus(t, "the victim's session", r, http.StatusCreated)
			var pending struct {
				SessionKey string `json:"session_key"`
				Nonce      string `json:"nonce"`
			}
			r.json(t, &pending)
			statuses := map[int]int{}
			for a := range 26 {
				for range 20 {
					r := s.do(t, "POST", "/sessions", public, nil, "X-Forwarded-For", fmt.Sprint("203.0.113.", a+1))
					statuses[r.status]++
					if r.status == http.StatusTooManyRequests {
						if n, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || n <= 0 {
							t.Fatalf("429 with Retry-After %q", r.header.Get("Retry-After"))
						}
						r.problem(t)
					}
				}
			}
			created, limited := statuses[http.StatusCreated], statuses[http.StatusTooManyRequests]
			switch {
			case created+limited != 26*20:
				t.Errorf("the flood's statuses %v, want only 201 and 429", statuses)
			case ceiling == 0 && limited != 0:
				t.Errorf("the flood's statuses %v, want every one 201 below the ceiling", statuses)
			case ceiling > 0 && limited == 0:
				t.Errorf("the flood filling the ceiling got no 429: %v", statuses)
			}
			r = s.do(t, "POST", "/sessions/authorize", private, map[string]any{"nonce": pending.Nonce, "permissions": []string{"token:read"}})
			if r.status/100 != 2 {
				t.Fatalf("authorizing the victim's session after the flood = %d %s", r.status, r.body)
			}
			wantStatus(t, "GET /permissions with the victim's authorized session",
				s.do(t, "GET", "/permissions", pending.SessionKey, nil), http.StatusOK)
		})
	}
}
