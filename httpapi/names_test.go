package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/tokenvault/tokenvault/httpapi"
)

// TestControlCharactersRefusedOverHTTP sends \u0000 (and other control
// characters) in names, metadata keys, custom ids and containers, in
// bodies and queries, and wants 400 naming the field.
func TestControlCharactersRefusedOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, tokens := s.app(t, map[string]any{"name": "b", "type": "private", "rules": []map[string]any{{"priority": 1, "container": "/",
		"transform": "reveal", "permissions": []string{"token:create", "token:read", "token:search"}}}})
	const code = `module.exports = async function (req) { return { raw: {} } }`
	tests := []struct {
		name, method, path, body, field string
		tokens                          bool // sent with the tokens key
	}{
		{"application name", "POST", "/applications", `{"name": "a\u0000b", "type": "private", "permissions": ["token:read"]}`, "name", false},
		{"proxy name", "POST", "/proxies", `{"name": "p\u0000", "destination_url": "https://example.com/in"}`, "name", false},
		{"formula name", "POST", "/reactor-formulas", `{"name": "f\u0000", "type": "private", "code": "` + code + `"}`, "name", false},
		{"formula configuration name", "POST", "/reactor-formulas", `{"name": "f", "type": "private", "code": "` + code + `", "configuration": [{"name": "k\u001b", "type": "string"}]}`, "configuration[0].name", false},
		{"reactor name", "POST", "/reactors", `{"name": "r\u0085", "code": "` + code + `"}`, "name", false},
		{"metadata key", "POST", "/tokens", `{"type": "token", "data": "x", "metadata": {"m\u0000": "v"}}`, "metadata", true},
		{"custom id", "POST", "/tokens", `{"id": "abc\u007fdef", "type": "token", "data": "x"}`, "id", true},
		{"container", "POST", "/tokens", `{"type": "token", "data": "x", "containers": ["/a\u0000/"]}`, "containers[0]", true},
		{"searched metadata key", "POST", "/tokens/search", `{"query": "metadata.m\u0000:v"}`, "query", true},
		{"listed metadata key", "GET", "/tokens?metadata.m%00=v", "", "metadata", true},
		{"log entity type", "GET", "/logs?entity_type=%00", "", "entity_type", false},
		{"log entity id", "GET", "/logs?entity_type=token&entity_id=%01abc", "", "entity_id", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			key := s.mgmt
			if tc.tokens {
				key = tokens
			}
			r := s.do(t, tc.method, tc.path, key, body)
			wantStatus(t, tc.method+" "+tc.path, r, http.StatusBadRequest)
			if p := r.problem(t); len(p.Errors[tc.field]) == 0 {
				t.Errorf("%s %s: errors = %v, want one on %q", tc.method, tc.path, p.Errors, tc.field)
			}
		})
	}
}
