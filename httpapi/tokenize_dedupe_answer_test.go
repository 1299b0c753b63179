package httpapi_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/tokenvault/tokenvault/httpapi"
)

// TestDeduplicatedCreateAnswersOneShapeOverHTTP: POST /tokens and
// /tokenize with deduplicate_token, by a key whose rule reveals, answer a
// card's mask the first time and every time after (the token found again),
// never the whole number.
func TestDeduplicatedCreateAnswersOneShapeOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, backend := s.app(t, map[string]any{"name": "b", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal",
			"permissions": []string{"token:create", "token:read"}}}})
	const number = "4242424242424242"
	card := map[string]any{"type": "card", "deduplicate_token": true,
		"data": map[string]any{"number": number, "expiration_month": 12, "expiration_year": 2031}}
	for i := range 3 {
		for _, r := range []response{s.do(t, "POST", "/tokens", backend, card), s.do(t, "POST", "/tokenize", backend, []any{card})} {
			wantStatus(t, "a deduplicating create", r, http.StatusCreated)
			if bytes.Contains(r.body, []byte(number)) || !bytes.Contains(r.body, []byte("XXXXXXXXXXXX4242")) {
				t.Errorf("create %d answered %s; want the mask, never the number", i, r.body)
			}
		}
	}
}
