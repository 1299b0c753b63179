package httpapi_test

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
)

// intentServer serves a Vault on a clock the test moves, with a public
// application (granted token:create only) and a private one reading
// (revealed) and creating tokens.
func intentServer(t *testing.T) (s *server, clock *testfake.Clock, public, private string) {
	clock = testfake.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s = newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Now = clock.Now })
	_, public = s.app(t, map[string]any{"name": "web", "type": "public", "permissions": []string{"token:create"}})
	_, private = s.app(t, map[string]any{"name": "backend", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal",
			"permissions": []string{"token:create", "token:read"}}}})
	return s, clock, public, private
}

var intentCardBody = map[string]any{"type": "card",
	"data": map[string]any{"number": "5555555555554444", "expiration_month": 3, "expiration_year": 2031, "cvc": "321"}}

// TestTokenIntentsOverHTTP: create with a public key (the card's summary,
// never the data), read and delete by the creator only, convert with a
// private key through /tokens and /tokenize, once; hostile requests get
// their problem.
func TestTokenIntentsOverHTTP(t *testing.T) {
	s, clock, public, private := intentServer(t)
	r := s.do(t, "POST", "/token-intents", public, intentCardBody)
	wantStatus(t, "POST /token-intents", r, 201)
	if bytes.Contains(r.body, []byte("5555555555554444")) || bytes.Contains(r.body, []byte("321")) {
		t.Errorf("the intent shows its data: %s", r.body)
	}
	var in tokenvault.TokenIntent
	r.json(t, &in)
	want := tokenvault.CardDetails{Bin: "55555555", Last4: "4444", ExpirationMonth: 3, ExpirationYear: 2031, Brand: "mastercard"}
	if in.Card == nil || *in.Card != want || !in.ExpiresAt.Equal(clock.Now().Add(24*time.Hour)) {
		t.Errorf("intent = %s", r.body)
	}
	wantStatus(t, "GET by its creator", s.do(t, "GET", "/token-intents/"+in.ID, public, nil), 200)
	_, other := s.app(t, map[string]any{"name": "web2", "type": "public", "permissions": []string{"token:create"}})
	wantStatus(t, "GET by another public key", s.do(t, "GET", "/token-intents/"+in.ID, other, nil), 404)
	wantStatus(t, "DELETE by another public key", s.do(t, "DELETE", "/token-intents/"+in.ID, other, nil), 404)
	wantStatus(t, "GET by a private key without token-intent:read", s.do(t, "GET", "/token-intents/"+in.ID, private, nil), 403)

	for name, body := range map[string]any{
		"expires_at past 48 hours": map[string]any{"type": "token", "data": "x", "expires_at": clock.Now().Add(49 * time.Hour)},
		"unknown field":            map[string]any{"type": "token", "data": "x", "ttl": 3600},
		"bad card":                 map[string]any{"type": "card", "data": map[string]any{"number": "1234"}},
	} {
		r := s.do(t, "POST", "/token-intents", public, body)
		wantStatus(t, name, r, 400)
		r.problem(t)
	}

	wantStatus(t, "a public key converting", s.do(t, "POST", "/tokens", public, map[string]any{"token_intent_id": in.ID}), 403)
	wantStatus(t, "converting with type too", s.do(t, "POST", "/tokens", private, map[string]any{"token_intent_id": in.ID, "type": "card"}), 400)
	r = s.do(t, "POST", "/tokens", private, map[string]any{"token_intent_id": in.ID, "metadata": map[string]string{"order": "42"}})
	wantStatus(t, "POST /tokens converting", r, 201)
	var tok tokenvault.Token
	r.json(t, &tok)
	if tok.Type != "card" || tok.Metadata["order"] != "42" || tok.Fingerprint == "" || in.Fingerprint != "" {
		t.Errorf("converted token = %s", r.body)
	}
	read := s.do(t, "GET", "/tokens/"+tok.ID, private, nil)
	wantStatus(t, "GET the converted token", read, 200)
	if !bytes.Contains(read.body, []byte("5555555555554444")) || bytes.Contains(read.body, []byte("cvc")) {
		t.Errorf("converted token's data: %s, want the number without the cvc", read.body)
	}
	wantStatus(t, "converting twice", s.do(t, "POST", "/tokens", private, map[string]any{"token_intent_id": in.ID}), 404)
	wantStatus(t, "GET after conversion", s.do(t, "GET", "/token-intents/"+in.ID, public, nil), 404)

	// Through /tokenize, nested, with a new id of the caller's.
	r = s.do(t, "POST", "/token-intents", public, map[string]any{"type": "token", "data": "078-05-1120"})
	wantStatus(t, "POST /token-intents (token)", r, 201)
	var in2 tokenvault.TokenIntent
	r.json(t, &in2)
	r = s.do(t, "POST", "/tokenize", private, map[string]any{"ssn": map[string]any{"token_intent_id": in2.ID, "id": "ssn-of-ada"}})
	wantStatus(t, "POST /tokenize converting", r, 201)
	if !strings.Contains(string(r.body), `"id":"ssn-of-ada"`) {
		t.Errorf("tokenize answer %s", r.body)
	}

	// Deleted, and expired.
	r = s.do(t, "POST", "/token-intents", public, intentCardBody)
	var in3 tokenvault.TokenIntent
	r.json(t, &in3)
	wantStatus(t, "DELETE by its creator", s.do(t, "DELETE", "/token-intents/"+in3.ID, public, nil), 204)
	wantStatus(t, "converting a deleted intent", s.do(t, "POST", "/tokens", private, map[string]any{"token_intent_id": in3.ID}), 404)
	r = s.do(t, "POST", "/token-intents", public, map[string]any{"type": "token", "data": "x", "expires_at": clock.Now().Add(time.Hour)})
	wantStatus(t, "POST /token-intents with expires_at", r, 201)
	var in4 tokenvault.TokenIntent
	r.json(t, &in4)
	clock.Advance(time.Hour)
	wantStatus(t, "converting an expired intent", s.do(t, "POST", "/tokens", private, map[string]any{"token_intent_id": in4.ID}), 404)

	// Another tenant's keys never reach an intent.
	boot, err := s.v.CreateTenant(t.Context(), tokenvault.CreateTenantRequest{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	_, private2 := s.appIn(t, string(boot.Application.Key), map[string]any{"name": "b2", "type": "private",
		"permissions": []string{"token:create", "token-intent:read"}})
	r = s.do(t, "POST", "/token-intents", public, intentCardBody)
	var in5 tokenvault.TokenIntent
	r.json(t, &in5)
	wantStatus(t, "GET from another tenant", s.do(t, "GET", "/token-intents/"+in5.ID, private2, nil), 404)
	wantStatus(t, "converting from another tenant", s.do(t, "POST", "/tokens", private2, map[string]any{"token_intent_id": in5.ID}), 404)
}

// TestTokenIntentConvertRaceOverHTTP: two POST /tokens converting one
// intent at once: exactly one 201, the other 404.
func TestTokenIntentConvertRaceOverHTTP(t *testing.T) {
	s, _, public, private := intentServer(t)
	for round := range 5 {
		r := s.do(t, "POST", "/token-intents", public, map[string]any{"type": "token", "data": round})
		wantStatus(t, "POST /token-intents", r, 201)
		var in tokenvault.TokenIntent
		r.json(t, &in)
		statuses := make([]int, 2)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Go(func() {
				req, _ := http.NewRequest("POST", s.srv.URL+"/vault/tokens", strings.NewReader(`{"token_intent_id":"`+in.ID+`"}`))
				req.Header.Set("SVC-API-KEY", private)
				req.Header.Set("Content-Type", "application/json")
				if res, err := http.DefaultClient.Do(req); err == nil {
					statuses[i] = res.StatusCode
					res.Body.Close()
				}
			})
		}
		wg.Wait()
		if !(statuses[0] == 201 && statuses[1] == 404 || statuses[0] == 404 && statuses[1] == 201) {
			t.Fatalf("round %d: statuses %v, want one 201 and one 404", round, statuses)
		}
	}
}

// TestTokenIntentUpdatesDuplicateOverHTTP: POST /tokens converting an
// intent of a card held already answers 201 with the held token, whose
// data now has the intent's expiration and no cvc.
func TestTokenIntentUpdatesDuplicateOverHTTP(t *testing.T) {
	s, _, public, _ := intentServer(t)
	_, updater := s.app(t, map[string]any{"name": "updater", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal",
			"permissions": []string{"token:create", "token:read", "token:update"}}}})
	r := s.do(t, "POST", "/tokens", updater, intentCardBody)
	wantStatus(t, "POST /tokens", r, 201)
	var held tokenvault.Token
	r.json(t, &held)
	r = s.do(t, "POST", "/token-intents", public, map[string]any{"type": "card",
		"data": map[string]any{"number": "5555555555554444", "expiration_month": 9, "expiration_year": 2039}})
	wantStatus(t, "POST /token-intents", r, 201)
	var in tokenvault.TokenIntent
	r.json(t, &in)
	r = s.do(t, "POST", "/tokens", updater, map[string]any{"token_intent_id": in.ID})
	wantStatus(t, "converting a duplicate", r, 201)
	var got tokenvault.Token
	r.json(t, &got)
	if got.ID != held.ID {
		t.Errorf("converted to %s, want the held %s", got.ID, held.ID)
	}
	read := s.do(t, "GET", "/tokens/"+held.ID, updater, nil)
	wantStatus(t, "GET the held token", read, 200)
	if !bytes.Contains(read.body, []byte(`"expiration_year":2039`)) || bytes.Contains(read.body, []byte("cvc")) {
		t.Errorf("the held token after the conversion: %s", read.body)
	}
}
