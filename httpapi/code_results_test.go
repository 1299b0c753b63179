package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestCodeResultsAreBoundedOverHTTP: with CodeMaxResultBytes 64 KiB, a
// reactor returning more answers 413 in problem+json naming the limit, one
// returning a little less 200; a proxy whose request transform builds a
// larger body answers 413 {"proxy_error": ...} naming it, and the
// destination is never called. Before, about 30 MB were accepted.
func TestCodeResultsAreBoundedOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Code.MaxResultBytes = 64 << 10 })
	key, reactor := tenantReactor(t, s.v, "Big", `module.exports = async req => ({raw: "x".repeat(req.args.n)})`)
	status, body, err := s.react(t.Context(), key, reactor, map[string]any{"n": 60000})
	if err != nil || status != http.StatusOK {
		t.Fatalf("a result under the bound = %d %.200s %v", status, body, err)
	}
	r := s.do(t, "POST", "/reactors/"+reactor+"/react", key, map[string]any{"args": map[string]any{"n": 70000}})
	wantStatus(t, "a result over the bound", r, http.StatusRequestEntityTooLarge)
	if p := r.problem(t); !strings.Contains(p.Detail, "64 KiB") {
		t.Errorf("problem = %+v, want it to name 64 KiB", p)
	}

	var called atomic.Bool
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called.Store(true) }))
	defer dest.Close()
	r = s.do(t, "POST", "/proxies", s.mgmt, map[string]any{
		"name": "big", "destination_url": dest.URL, "require_auth": false,
		"request_transform": map[string]any{"code": `module.exports = async req => ({body: {s: "x".repeat(70000)}})`},
	})
	wantStatus(t, "POST /proxies", r, http.StatusCreated)
	var p struct{ Key string }
	r.json(t, &p)
	r = s.do(t, "POST", "/proxy", "", map[string]any{}, "SVC-PROXY-KEY", p.Key)
	wantStatus(t, "a transform's body over the bound", r, http.StatusRequestEntityTooLarge)
	var pe struct {
		ProxyError httpapi.Problem `json:"proxy_error"`
	}
	if err := json.Unmarshal(r.body, &pe); err != nil || pe.ProxyError.Status != http.StatusRequestEntityTooLarge || !strings.Contains(pe.ProxyError.Detail, "64 KiB") {
		t.Errorf("proxy answer = %s, want a proxy_error naming 64 KiB", r.body)
	}
	if called.Load() {
		t.Error("the destination was called")
	}
}
