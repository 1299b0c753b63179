package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestIntentsTellNonReadersNothingOverHTTP: POST and GET /token-intents
// answer a public key, trying guesses at a card a revealing key sees the
// BIN, last four and fingerprint of, no fingerprint and the same answer
// for the right guess as for the wrong ones.
func TestIntentsTellNonReadersNothingOverHTTP(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpapi.Options{})
	const number = "4242424242424242"
	_, admin := s.app(t, map[string]any{"name": "a", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal",
			"permissions": []string{"token:create", "token:read"}}}})
	_, masker := s.app(t, map[string]any{"name": "m", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:read"}}}})
	_, public := s.app(t, map[string]any{"name": "web", "type": "public", "permissions": []string{"token:create"}})
	r := s.do(t, "POST", "/tokens", admin, map[string]any{"type": "card",
		"data": map[string]any{"number": number, "expiration_month": 12, "expiration_year": 2031}})
	wantStatus(t, "POST /tokens", r, http.StatusCreated)
	var stored tokenvault.Token
	r.json(t, &stored)
	r = s.do(t, "GET", "/tokens/"+stored.ID, masker, nil)
	wantStatus(t, "GET by the revealing key", r, http.StatusOK)
	var seen tokenvault.Token
	r.json(t, &seen)
	if seen.Fingerprint == "" {
		t.Fatalf("the revealing key sees no fingerprint: %s", r.body)
	}
	var first map[string]any
	check := func(what, guess string, r response) {
		t.Helper()
		if strings.Contains(string(r.body), `"fingerprint"`) || strings.Contains(string(r.body), seen.Fingerprint) {
			t.Fatalf("%s(%s) tells a fingerprint: %s", what, guess, r.body)
		}
		for _, h := range []string{"ETag", "Location"} {
			if v := r.header.Get(h); strings.Contains(v, seen.Fingerprint) {
				t.Fatalf("%s(%s): header %s = %q", what, guess, h, v)
			}
		}
		var m map[string]any
		if err := json.Unmarshal(r.body, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"id", "card", "created_at", "expires_at"} {
			delete(m, k)
		}
		if first == nil {
			first = m
		} else if diff := cmp.Diff(first, m); diff != "" {
			t.Fatalf("%s(%s) differs from another guess's answer:\n%s", what, guess, diff)
		}
	}
	for _, g := range guesses(number) {
		r := s.do(t, "POST", "/token-intents", public, map[string]any{"type": "card",
			"data": map[string]any{"number": g, "expiration_month": 12, "expiration_year": 2031}})
		wantStatus(t, "POST /token-intents", r, http.StatusCreated)
		check("POST /token-intents", g, r)
		var in tokenvault.TokenIntent
		r.json(t, &in)
		r = s.do(t, "GET", "/token-intents/"+in.ID, public, nil)
		wantStatus(t, "GET /token-intents/{id}", r, http.StatusOK)
		check("GET /token-intents/{id}", g, r)
	}
}

// TestIntentConversionExpressionsTellNothingOverHTTP: POST /tokens
// converting an intent with a mask over its data, by a key whose
// token:create does not reveal, is the same 403 for a right guess and a
// wrong one, and the intent stays.
func TestIntentConversionExpressionsTellNothingOverHTTP(t *testing.T) {
	s, _, public, _ := intentServer(t)
	_, converter := s.app(t, map[string]any{"name": "conv", "type": "private", "permissions": []string{"token:create"}})
	var bodies []string
	for _, guess := range []string{"7", "5"} {
		r := s.do(t, "POST", "/token-intents", public, map[string]any{"type": "token", "data": "789-00-1234"})
		wantStatus(t, "POST /token-intents", r, http.StatusCreated)
		var in tokenvault.TokenIntent
		r.json(t, &in)
		r = s.do(t, "POST", "/tokens", converter, map[string]any{"token_intent_id": in.ID,
			"mask": `{{ data | slice: 0, 1 | replace: "` + guess + `", "true" | to_boolean }}`})
		wantStatus(t, "converting with a mask over the intent's data", r, http.StatusForbidden)
		r.problem(t)
		bodies = append(bodies, string(r.body))
		wantStatus(t, "GET the intent after", s.do(t, "GET", "/token-intents/"+in.ID, public, nil), http.StatusOK)
	}
	if bodies[0] != bodies[1] {
		t.Errorf("the right guess and a wrong one are answered differently:\n%s\n%s", bodies[0], bodies[1])
	}
}
