package httpapi_test

import (
	"bytes"
	"testing"
)

// TestTokenIntentConvertAnswersOneShapeOverHTTP: POST /tokens and
// /tokenize converting an intent answer a card's mask, never its number,
// for a reveal rule, whether the conversion created the token or
// deduplicated onto one (changed or not), in either order.
func TestTokenIntentConvertAnswersOneShapeOverHTTP(t *testing.T) {
	const number, masked = "5555555555554444", "XXXXXXXXXXXX4444"
	for _, order := range []string{"created first", "held first"} {
		t.Run(order, func(t *testing.T) {
			s, _, public, private := intentServer(t)
			_, updater := s.app(t, map[string]any{"name": "updater", "type": "private",
				"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal",
					"permissions": []string{"token:create", "token:read", "token:update"}}}})
			if order == "held first" {
				wantStatus(t, "POST /tokens", s.do(t, "POST", "/tokens", private, intentCardBody), 201)
			}
			convert := func(what, key string, year int, path string) {
				t.Helper()
				r := s.do(t, "POST", "/token-intents", public, map[string]any{"type": "card",
					"data": map[string]any{"number": number, "expiration_month": 3, "expiration_year": year}})
				wantStatus(t, "POST /token-intents", r, 201)
				var in struct {
					ID string `json:"id"`
				}
				r.json(t, &in)
				body := any(map[string]any{"token_intent_id": in.ID})
				if path == "/tokenize" {
					body = map[string]any{"card": body}
				}
				r = s.do(t, "POST", path, key, body)
				wantStatus(t, what, r, 201)
				if bytes.Contains(r.body, []byte(number)) || !bytes.Contains(r.body, []byte(masked)) {
					t.Errorf("%s answered %s; want the mask %s and never the number", what, r.body, masked)
				}
			}
			convert("a conversion", private, 2031, "/tokens")
			convert("the same conversion again (deduplicated)", private, 2031, "/tokens")
			convert("again through /tokenize", private, 2031, "/tokenize")
			convert("a deduplicated conversion updating the token", updater, 2039, "/tokens")
			convert("the same update again", updater, 2039, "/tokenize")
		})
	}
}
