package vaulttest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// Destination records the last request it got and answers with a JSON
// echo of it.
type Destination struct {
	Mu     sync.Mutex
	Method string
	Path   string
	Raw    string // the path as it came, escaped
	Query  string
	Header http.Header
	Body   string
	Srv    *httptest.Server
}

// NewDestination starts a Destination, closed when the test ends.
func NewDestination(t *testing.T) *Destination {
	d := &Destination{}
	d.Srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		d.Mu.Lock()
		d.Method, d.Path, d.Raw, d.Query, d.Header, d.Body = r.Method, r.URL.Path, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(b)
		d.Mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/fail") {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusTeapot)
			io.WriteString(w, "destination says no")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Dest", "yes")
		json.NewEncoder(w).Encode(map[string]any{"received": string(b), "card": "4242424242424242"})
	}))
	t.Cleanup(d.Srv.Close)
	return d
}

// Proxy creates a proxy from req with the bootstrap management key, named
// "proxy" unless req says otherwise.
func (e *Env) Proxy(t *testing.T, req tokenvault.ProxyRequest) *tokenvault.Proxy {
	t.Helper()
	if req.Name == "" {
		req.Name = "proxy"
	}
	p, err := e.V.CreateProxy(ctx, e.Mgmt, req)
	if err != nil {
		t.Fatalf("CreateProxy: %v", err)
	}
	return p
}

// JSONCall is a POST of the JSON body to path through the proxy with the
// given key, made with apiKey (none when empty).
func JSONCall(key string, apiKey tokenvault.Credential, path, body string) tokenvault.ProxyCall {
	return tokenvault.ProxyCall{ProxyKey: key, APIKey: apiKey, Method: "POST", Path: path,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)}
}
