package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestMaskingReadersLearnNoEqualityOverHTTP: a key that reads cards in
// /pci/ masked, and creates, reads in clear and searches in /sandbox/,
// tries the guess loop over HTTP: GET /tokens/{id}, GET /tokens and a
// search show it no fingerprint of the target; the fingerprint of each
// guess it creates in /sandbox/ finds only its guess (GET
// /tokens?fingerprint=, a fingerprint: term); a deduplicating POST
// /tokens next to the target makes a new token every time. A key that
// reveals still sees the fingerprint and deduplicates.
func TestMaskingReadersLearnNoEqualityOverHTTP(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpapi.Options{})
	const number = "4242424242424242"
	perms := []string{"token:create", "token:read", "token:search"}
	_, admin := s.app(t, map[string]any{"name": "a", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": perms}}})
	_, masker := s.app(t, map[string]any{"name": "m", "type": "private", "rules": []map[string]any{
		{"priority": 1, "container": "/sandbox/", "transform": "reveal", "permissions": perms},
		{"priority": 2, "container": "/pci/", "transform": "mask", "permissions": perms}}})
	card := func(n string) map[string]any {
		return map[string]any{"number": n, "expiration_month": 12, "expiration_year": 2031}
	}
	r := s.do(t, "POST", "/tokens", admin, map[string]any{"type": "card", "data": card(number)})
	wantStatus(t, "POST /tokens by the admin", r, http.StatusCreated)
	var stored tokenvault.Token
	r.json(t, &stored)
	if stored.Fingerprint == "" {
		t.Fatalf("the revealing admin sees no fingerprint: %s", r.body)
	}

	r = s.do(t, "GET", "/tokens/"+stored.ID, masker, nil)
	wantStatus(t, "GET /tokens/{id} by the masking key", r, http.StatusOK)
	var seen tokenvault.Token
	r.json(t, &seen)
	if seen.Fingerprint != "" {
		t.Fatalf("GET /tokens/{id} shows the masking key the fingerprint: %s", r.body)
	}
	var page struct{ Data []tokenvault.Token }
	for _, path := range []string{"/tokens?container=/pci/", "/tokens/search"} {
		if path == "/tokens/search" {
			r = s.do(t, "POST", path, masker, map[string]any{"query": "type:card"})
		} else {
			r = s.do(t, "GET", path, masker, nil)
		}
		wantStatus(t, path+" by the masking key", r, http.StatusOK)
		r.json(t, &page)
		if len(page.Data) != 1 || page.Data[0].Fingerprint != "" {
			t.Fatalf("%s shows the masking key a fingerprint: %s", path, r.body)
		}
	}

	seenIDs := map[string]bool{stored.ID: true}
	for i, g := range guesses(number)[:30] {
		r := s.do(t, "POST", "/tokens", masker, map[string]any{"type": "card", "data": card(g), "containers": []string{"/sandbox/"}})
		wantStatus(t, "POST /tokens (guess in /sandbox/)", r, http.StatusCreated)
		var guess tokenvault.Token
		r.json(t, &guess)
		if guess.Fingerprint == "" || (guess.Fingerprint == stored.Fingerprint) != (g == number) {
			t.Fatalf("guess %d: fingerprint %q, stored %q: want equal exactly for the right guess", i, guess.Fingerprint, stored.Fingerprint)
		}
		r = s.do(t, "GET", "/tokens?fingerprint="+url.QueryEscape(guess.Fingerprint), masker, nil)
		wantStatus(t, "GET /tokens?fingerprint=", r, http.StatusOK)
		r.json(t, &page)
		if len(page.Data) != 1 || page.Data[0].ID != guess.ID {
			t.Fatalf("guess %d: GET /tokens?fingerprint= = %s, want the guess only", i, r.body)
		}
		r = s.do(t, "POST", "/tokens/search", masker, map[string]any{"query": "fingerprint:" + guess.Fingerprint})
		wantStatus(t, "POST /tokens/search fingerprint:", r, http.StatusOK)
		r.json(t, &page)
		if len(page.Data) != 1 || page.Data[0].ID != guess.ID {
			t.Fatalf("guess %d: search by fingerprint = %s, want the guess only", i, r.body)
		}
		r = s.do(t, "POST", "/tokens", masker, map[string]any{"type": "card", "data": card(g), "deduplicate_token": true})
		wantStatus(t, "POST /tokens (deduplicating guess)", r, http.StatusCreated)
		var made tokenvault.Token
		r.json(t, &made)
		if seenIDs[made.ID] || made.Fingerprint != "" {
			t.Fatalf("guess %d: deduplicating create = %s, want a new token without a fingerprint", i, r.body)
		}
		seenIDs[made.ID] = true
	}

	r = s.do(t, "POST", "/tokens", admin, map[string]any{"type": "card", "data": card(number), "deduplicate_token": true})
	wantStatus(t, "POST /tokens (deduplicating, by the admin)", r, http.StatusCreated)
	var again tokenvault.Token
	r.json(t, &again)
	if again.ID != stored.ID || again.Fingerprint != stored.Fingerprint {
		t.Errorf("deduplicating create by a revealing key = %s, want %s with its fingerprint", r.body, stored.ID)
	}
}
