package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
)

// app creates an application over HTTP and returns its id and key.
func (s *server) app(t *testing.T, body map[string]any) (id, key string) {
	t.Helper()
	return s.appIn(t, s.mgmt, body)
}

// appIn creates an application with the management key mgmt.
func (s *server) appIn(t *testing.T, mgmt string, body map[string]any) (id, key string) {
	t.Helper()
	r := s.do(t, "POST", "/applications", mgmt, body)
	wantStatus(t, "POST /applications", r, 201)
	var a tokenvault.Application
	r.json(t, &a)
	return a.ID, string(a.Key)
}

func TestTokensOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, creator := s.app(t, map[string]any{"name": "c", "type": "public", "permissions": []string{"token:create"}})
	_, backend := s.app(t, map[string]any{"name": "b", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal",
			"permissions": []string{"token:read", "token:update", "token:delete", "token:search"}}}})

	// Tokenize keeps the shape: plain values become ids, requests tokens.
	r := s.do(t, "POST", "/tokenize", creator, `{"name": "Ada", "card": {"type": "card", "data": {"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031, "cvc": "123"}, "search_indexes": ["{{ data.number | last4 }}"], "metadata": {"ref": "A1"}}}`)
	wantStatus(t, "POST /tokenize", r, 201)
	if strings.Contains(string(r.body), "4242424242424242") || strings.Contains(string(r.body), `"123"`) {
		t.Errorf("tokenize response holds card data: %s", r.body)
	}
	var out struct {
		Name string           `json:"name"`
		Card tokenvault.Token `json:"card"`
	}
	r.json(t, &out)
	if out.Name == "" || out.Card.ID == "" || out.Card.Type != "card" {
		t.Fatalf("tokenize response %s", r.body)
	}

	r = s.do(t, "GET", "/tokens/"+out.Name, backend, nil)
	wantStatus(t, "GET /tokens/{id}", r, 200)
	var tok tokenvault.Token
	r.json(t, &tok)
	if tok.Data != "Ada" {
		t.Errorf("GET /tokens/{id} data = %v, want Ada", tok.Data)
	}

	r = s.do(t, "POST", "/detokenize", backend, map[string]any{"n": "{{ " + out.Name + " }}", "last": "{{ " + out.Card.ID + " | json: '$.number' | last4 }}"})
	wantStatus(t, "POST /detokenize", r, 200)
	if string(r.body) != `{"last":"4242","n":"Ada"}`+"\n" {
		t.Errorf("detokenize = %s", r.body)
	}

	r = s.do(t, "POST", "/tokens/search", backend, map[string]any{"query": "data:4242 AND metadata.ref:a1", "size": 5})
	wantStatus(t, "POST /tokens/search", r, 200)
	var page tokenvault.Page[tokenvault.Token]
	r.json(t, &page)
	if len(page.Data) != 1 || page.Data[0].ID != out.Card.ID || page.Pagination.PageSize != 5 {
		t.Errorf("search = %s", r.body)
	}

	r = s.do(t, "GET", "/tokens?type=card&metadata.ref=A1", backend, nil)
	wantStatus(t, "GET /tokens", r, 200)
	r.json(t, &page)
	if len(page.Data) != 1 || page.Data[0].ID != out.Card.ID {
		t.Errorf("list = %s", r.body)
	}

	r = s.do(t, "PATCH", "/tokens/"+out.Name, backend, `{"metadata": {"x": "y"}}`)
	wantStatus(t, "PATCH as application/json", r, 415)
	r.problem(t)
	r = s.do(t, "PATCH", "/tokens/"+out.Name, backend, `{"data": "Grace", "metadata": {"x": "y"}}`, "Content-Type", "application/merge-patch+json")
	wantStatus(t, "PATCH /tokens/{id}", r, 200)
	r.json(t, &tok)
	if tok.Metadata["x"] != "y" {
		t.Errorf("patched token %s", r.body)
	}

	r = s.do(t, "POST", "/tokens", creator, map[string]any{"id": "my-token", "type": "token", "data": "v"})
	wantStatus(t, "POST /tokens", r, 201)
	r = s.do(t, "POST", "/tokens", creator, map[string]any{"id": "my-token", "type": "token", "data": "v"})
	wantStatus(t, "POST /tokens duplicate id", r, 409)
	r.problem(t)

	r = s.do(t, "DELETE", "/tokens/my-token", backend, nil)
	wantStatus(t, "DELETE /tokens/{id}", r, 204)
	r = s.do(t, "GET", "/tokens/my-token", backend, nil)
	wantStatus(t, "GET deleted token", r, 404)
	r.problem(t)
}

func TestTokenErrorsOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, creator := s.app(t, map[string]any{"name": "c", "type": "public", "permissions": []string{"token:create"}})
	tests := []struct {
		name   string
		method string
		path   string
		key    string
		body   any
		status int
		field  string
	}{
		{"bad card deep in a body", "POST", "/tokenize", creator,
			`{"cards": [{"type": "card", "data": {"number": "4242424242424241", "expiration_month": 12, "expiration_year": 2031}}]}`, 400, "cards[0].data.number"},
		{"bare string body", "POST", "/tokenize", creator, `"x"`, 400, ""},
		{"malformed JSON", "POST", "/tokenize", creator, `{"a": `, 400, ""},
		{"no key", "POST", "/tokenize", "", `{"a": "b"}`, 401, ""},
		{"management key", "POST", "/tokenize", s.mgmt, `{"a": "b"}`, 403, ""},
		{"public key reads", "GET", "/tokens/abc", creator, nil, 403, ""},
		{"unknown field", "POST", "/tokens", creator, `{"type": "token", "data": "x", "colour": "red"}`, 400, "colour"},
		{"search without token:search", "POST", "/tokens/search", creator, `{"query": "data:x"}`, 403, ""},
		{"list size 101", "GET", "/tokens?size=101", creator, nil, 400, "size"},
	}
	for _, tc := range tests {
		r := s.do(t, tc.method, tc.path, tc.key, tc.body)
		if r.status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, r.status, r.body, tc.status)
			continue
		}
		p := r.problem(t)
		if tc.field != "" {
			if _, ok := p.Errors[tc.field]; !ok {
				t.Errorf("%s: errors %v, want one on %s", tc.name, p.Errors, tc.field)
			}
		}
	}
}

// TestExpiredCardStaysEditableOverHTTP: a card that expired since it was
// tokenized takes a metadata patch (200), not an expiry in the past (400).
func TestExpiredCardStaysEditableOverHTTP(t *testing.T) {
	clock := testfake.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s := newServer(t, httpapi.Options{}, withClock(clock))
	_, key := s.app(t, map[string]any{"name": "b", "type": "private", "permissions": []string{"token:create", "token:update"}})
	r := s.do(t, "POST", "/tokens", key, map[string]any{"type": "card",
		"data": map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031}})
	wantStatus(t, "POST /tokens (card)", r, http.StatusCreated)
	var card tokenvault.Token
	r.json(t, &card)
	clock.Advance(3 * 365 * 24 * time.Hour)
	r = s.do(t, "PATCH", "/tokens/"+card.ID, key, `{"metadata": {"customer": "42"}}`, "Content-Type", httpapi.MergePatchType)
	wantStatus(t, "PATCH metadata of an expired card", r, http.StatusOK)
	r = s.do(t, "PATCH", "/tokens/"+card.ID, key, `{"data": {"expiration_year": 2032}}`, "Content-Type", httpapi.MergePatchType)
	wantStatus(t, "PATCH an expiry in the past", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["data.expiration_year"] == nil {
		t.Errorf("errors = %v, want one on data.expiration_year", p.Errors)
	}
}

// TestUpdateCannotReadThroughNewExpressionsOverHTTP: a key that may update
// but not reveal gets 403 for a new mask over stored data.
func TestUpdateCannotReadThroughNewExpressionsOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, creator := s.app(t, map[string]any{"name": "c", "type": "private", "permissions": []string{"token:create"}})
	_, updater := s.app(t, map[string]any{"name": "u", "type": "public", "permissions": []string{"token:update"}})
	r := s.do(t, "POST", "/tokens", creator, map[string]any{"type": "token", "data": "secret"})
	wantStatus(t, "POST /tokens", r, http.StatusCreated)
	var tok tokenvault.Token
	r.json(t, &tok)
	r = s.do(t, "PATCH", "/tokens/"+tok.ID, updater, `{"mask": "{{ data }}"}`, "Content-Type", httpapi.MergePatchType)
	wantStatus(t, "PATCH a mask over stored data without reveal", r, http.StatusForbidden)
	if strings.Contains(string(r.body), "secret") {
		t.Errorf("the answer holds the data: %s", r.body)
	}
}
