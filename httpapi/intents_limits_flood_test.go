package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
)

// TestTokenIntentFloodFromManyAddressesOverHTTP: POST /token-intents
// from addresses A..Z (behind a trusted proxy; 20 each, cap 5 per address,
// a ceiling of 60 the flood fills) never removes a victim's pending
// intent: past the ceiling the flood is 429 with Retry-After and a
// problem, not a 201 that evicted someone; the victim's intent is still
// GET 200 and convertible. With the ceiling above the flood's share the
// victim creates another (201).
func TestTokenIntentFloodFromManyAddressesOverHTTP(t *testing.T) {
	t.Parallel()
	const victim = "198.51.100.7"
	for _, ceiling := range []int{0, 60} {
		t.Run(fmt.Sprint("ceiling=", ceiling), func(t *testing.T) {
			clock := testfake.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
			st := boltStore(t)
			s := newServer(t, httpapi.Options{TrustForwardedFor: true}, func(o *tokenvault.Options) {
				o.Store, o.Now = st, clock.Now
				o.Limits.MaxPendingTokenIntentsPerAddress, o.Limits.MaxPendingTokenIntentsPerApplication = 5, ceiling
			})
			_, public := s.app(t, map[string]any{"name": "web", "type": "public", "permissions": []string{"token:create"}})
			_, private := s.app(t, map[string]any{"name": "backend", "type": "private", "permissions": []string{"token:create"}})
			body, err := json.Marshal(intentCardBody)
			if err != nil {
				t.Fatal(err)
			}
			r := s.do(t, "POST", "/token-intents", public, string(body), "X-Forwarded-For", victim)
			wantStatus(t, "the victim's intent", r, http.StatusCreated)
			var pending tokenvault.TokenIntent
			r.json(t, &pending)
			statuses := map[int]int{}
			for a := range 26 {
				for range 20 {
					r := s.do(t, "POST", "/token-intents", public, string(body), "X-Forwarded-For", fmt.Sprint("203.0.113.", a+1))
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
			wantStatus(t, "GET the victim's intent after the flood",
				s.do(t, "GET", "/token-intents/"+pending.ID, public, nil, "X-Forwarded-For", victim), http.StatusOK)
			if ceiling == 0 {
				wantStatus(t, "the victim creating another",
					s.do(t, "POST", "/token-intents", public, string(body), "X-Forwarded-For", victim), http.StatusCreated)
			}
			wantStatus(t, "converting the victim's intent",
				s.do(t, "POST", "/tokens", private, map[string]any{"token_intent_id": pending.ID}), http.StatusCreated)
		})
	}
}
