package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/httpapi"
)

// TestSearchAloneSeesWhatListSeesOverHTTP: a key with token:search and no
// token:read gets 403 for a metadata term from POST /tokens/search, as from
// GET /tokens?metadata.m=v, and finds a token by a search index value
// without its metadata, search indexes, fingerprint, mask or expressions.
func TestSearchAloneSeesWhatListSeesOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, creator := s.app(t, map[string]any{"name": "c", "type": "private", "permissions": []string{"token:create", "token:read"}})
	_, searcher := s.app(t, map[string]any{"name": "s", "type": "private", "permissions": []string{"token:search"}})
	r := s.do(t, "POST", "/tokens", creator, map[string]any{"type": "card", "metadata": map[string]string{"m": "v"},
		"search_indexes": []string{"{{ data.number }}"},
		"data":           map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031}})
	wantStatus(t, "POST /tokens", r, http.StatusCreated)

	r = s.do(t, "GET", "/tokens?metadata.m=v", searcher, nil)
	wantStatus(t, "GET /tokens?metadata.m=v by search alone", r, http.StatusForbidden)
	r = s.do(t, "POST", "/tokens/search", searcher, map[string]any{"query": "metadata.m:v"})
	wantStatus(t, "POST /tokens/search metadata.m:v by search alone", r, http.StatusForbidden)
	r.problem(t)

	r = s.do(t, "POST", "/tokens/search", searcher, map[string]any{"query": "data:4242424242424242"})
	wantStatus(t, "POST /tokens/search data:... by search alone", r, http.StatusOK)
	body := string(r.body)
	if !strings.Contains(body, `"type":"card"`) {
		t.Fatalf("search alone = %s, want the card", body)
	}
	for _, field := range []string{`"metadata"`, `"search_indexes"`, `"fingerprint"`, `"fingerprint_expression"`, `"mask"`, "4242424242424242"} {
		if strings.Contains(body, field) {
			t.Errorf("search alone sees %s: %s", field, body)
		}
	}
}
