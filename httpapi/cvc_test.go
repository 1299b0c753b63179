package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
)

// TestCVCRetentionOverHTTP: a card's cvc is answered by GET /tokens/{id},
// GET /tokens, POST /tokens/search and POST /detokenize during its window
// (Options.Retention.CVC, here the default hour), by none of them after it,
// before and after the sweeper runs; PATCH with a new cvc starts a new
// window.
func TestCVCRetentionOverHTTP(t *testing.T) {
	clock := testfake.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s := newServer(t, httpapi.Options{}, withClock(clock))
	_, key := s.app(t, map[string]any{"name": "b", "type": "private", "rules": []map[string]any{{"priority": 1, "container": "/",
		"transform": "reveal", "permissions": []string{"token:create", "token:read", "token:search", "token:update"}}}})
	r := s.do(t, "POST", "/tokens", key, map[string]any{"type": "card", "metadata": map[string]string{"k": "v"},
		"data": map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031, "cvc": "123"}})
	wantStatus(t, "POST /tokens", r, http.StatusCreated)
	var tok tokenvault.Token
	r.json(t, &tok)
	if strings.Contains(string(r.body), `"123"`) {
		t.Errorf("create answer shows the cvc: %s", r.body)
	}
	answers := func() map[string]string {
		out := map[string]string{}
		for name, r := range map[string]response{
			"GET /tokens/{id}":    s.do(t, "GET", "/tokens/"+tok.ID, key, nil),
			"GET /tokens":         s.do(t, "GET", "/tokens?id="+tok.ID, key, nil),
			"POST /tokens/search": s.do(t, "POST", "/tokens/search", key, map[string]any{"query": "metadata.k:v"}),
			"POST /detokenize":    s.do(t, "POST", "/detokenize", key, map[string]any{"c": "{{ " + tok.ID + " }}"}),
		} {
			if r.status != http.StatusOK {
				t.Fatalf("%s = %d %s", name, r.status, r.body)
			}
			out[name] = string(r.body)
		}
		return out
	}
	want := func(when, cvc string, present bool) {
		t.Helper()
		for name, body := range answers() {
			if strings.Contains(body, `"cvc":"`+cvc+`"`) != present {
				t.Errorf("%s %s: cvc %s present = %v, want %v: %s", when, name, cvc, !present, present, body)
			}
		}
	}
	want("at creation", "123", true)
	clock.Advance(59 * time.Minute)
	want("after 59 minutes", "123", true)
	clock.Advance(time.Minute)
	want("after the hour, before the sweep", "123", false)
	if n, err := s.v.Sweep(context.Background()); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	want("after the sweep", "123", false)

	r = s.do(t, "PATCH", "/tokens/"+tok.ID, key, `{"data": {"cvc": "456"}}`, "Content-Type", httpapi.MergePatchType)
	wantStatus(t, "PATCH a new cvc", r, http.StatusOK)
	clock.Advance(59 * time.Minute)
	want("59 minutes after a PATCH with a new cvc", "456", true)
	clock.Advance(time.Minute)
	want("an hour after a PATCH with a new cvc", "456", false)
}
