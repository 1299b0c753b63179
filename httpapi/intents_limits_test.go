package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/store"
)

// liveIntents counts the token intents stored in st, and their entries
// in the per-address cap's index by "<creator>/<address MAC>".
func liveIntents(t *testing.T, st store.Store) (records int, perAddress map[string]int) {
	t.Helper()
	perAddress = map[string]int{}
	err := st.View(context.Background(), func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, _ []byte) error {
			parts := strings.SplitN(string(k), "/", 4)
			switch {
			case len(parts) == 4 && parts[0] == "tenant" && parts[2] == "token_intent":
				records++
			case len(parts) == 4 && strings.HasPrefix(parts[3], "idx/intent-creator-addr/"):
				p := strings.SplitN(strings.TrimPrefix(parts[3], "idx/intent-creator-addr/"), "/", 3)
				perAddress[p[0]+"/"+p[1]]++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return records, perAddress
}

// TestTokenIntentFloodOverHTTP: 300 POST /token-intents, 16 at a time,
// with one public key from one address (behind a trusted proxy; its cap
// lowered to 10) are all 201 and leave 10 of that address's intents
// live; intents created from other addresses and in process during and
// after the flood are created, kept and convertible; the address's
// intent from before the flood is evicted: GET, DELETE and converting it
// are 404, and its audit lines say created, then evicted.
func TestTokenIntentFloodOverHTTP(t *testing.T) {
	t.Parallel()
	const cap, flood = 10, 300
	clock := testfake.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	st := boltStore(t)
	s := newServer(t, httpapi.Options{TrustForwardedFor: true}, func(o *tokenvault.Options) {
		o.Store, o.Now, o.Limits.MaxPendingTokenIntentsPerAddress = st, clock.Now, cap
	})
	_, public := s.app(t, map[string]any{"name": "web", "type": "public", "permissions": []string{"token:create"}})
	_, private := s.app(t, map[string]any{"name": "backend", "type": "private", "permissions": []string{"token:create"}})
	body, err := json.Marshal(intentCardBody)
	if err != nil {
		t.Fatal(err)
	}
	create := func(addr string) (string, int) {
		r := s.do(t, "POST", "/token-intents", public, string(body), "X-Forwarded-For", addr)
		var in tokenvault.TokenIntent
		if r.status == http.StatusCreated {
			r.json(t, &in)
		}
		return in.ID, r.status
	}
	first, status := create("203.0.113.66")
	if status != http.StatusCreated {
		t.Fatalf("the first intent = %d", status)
	}
	done := make(chan map[int]int)
	go func() {
		done <- hammer(flood, 16, func(int) int {
			return s.send("POST", "/token-intents", public, string(body), "X-Forwarded-For", "203.0.113.66")
		})
	}()
	var legit []string
	others := func(when string, i int) {
		id, status := create(fmt.Sprint("198.51.100.", i))
		if status != http.StatusCreated {
			t.Errorf("an intent from another address %s the flood = %d, want 201", when, status)
		}
		in, err := s.v.CreateTokenIntent(context.Background(), tokenvault.Credential(public), tokenvault.TokenIntentRequest{Type: "token", Data: "x"})
		if err != nil {
			t.Fatalf("an in-process intent %s the flood: %v", when, err)
		}
		legit = append(legit, id, in.ID)
	}
	for i := range 3 {
		others("during", i+1)
	}
	if counts := <-done; counts[http.StatusCreated] != flood {
		t.Errorf("the flood's statuses %v, want %d 201", counts, flood)
	}
	others("after", 9)

	records, perAddress := liveIntents(t, st)
	if want := cap + len(legit); records != want {
		t.Errorf("%d intents stored, want %d (the flood's cap and the others)", records, want)
	}
	for a, n := range perAddress {
		if n > cap {
			t.Errorf("address %s holds %d live intents, over the cap of %d", a, n, cap)
		}
	}
	wantStatus(t, "GET the evicted intent", s.do(t, "GET", "/token-intents/"+first, public, nil, "X-Forwarded-For", "203.0.113.66"), 404)
	wantStatus(t, "DELETE the evicted intent", s.do(t, "DELETE", "/token-intents/"+first, public, nil, "X-Forwarded-For", "203.0.113.66"), 404)
	wantStatus(t, "converting the evicted intent", s.do(t, "POST", "/tokens", private, map[string]any{"token_intent_id": first}), 404)
	r := s.do(t, "GET", fmt.Sprintf("/logs?entity_type=token_intent&entity_id=%s", first), s.mgmt, nil)
	wantStatus(t, "GET the evicted intent's logs", r, 200)
	if !strings.Contains(string(r.body), "Token intent evicted") {
		t.Errorf("the evicted intent's lines: %s", r.body)
	}
	for i, id := range legit {
		wantStatus(t, fmt.Sprint("converting legitimate intent ", i), s.do(t, "POST", "/tokens", private, map[string]any{"token_intent_id": id}), 201)
	}
}
