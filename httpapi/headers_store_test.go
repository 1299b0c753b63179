package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// wantNoStore fails unless h carries exactly Cache-Control: no-store,
// X-Content-Type-Options: nosniff and Content-Security-Policy: sandbox.
func wantNoStore(t *testing.T, what string, status int, h http.Header) {
	t.Helper()
	for name, want := range map[string]string{"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox"} {
		if got := h.Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("%s = %d: %s = %q, want %q", what, status, name, got, want)
		}
	}
}

// TestEveryAnswerNoStore: every route of the mux (operator routes and
// the root included), with no key, a tenant's management key and the
// operator key, answers with Cache-Control: no-store and
// X-Content-Type-Options: nosniff and Content-Security-Policy: sandbox,
// success or error; so do the mux's own 404 and 405, a created
// application (its key), revealed data, and a proxy's answer whose
// destination asked to be cached and answered a page with a script of its
// own, under a policy that would let it run.
func TestEveryAnswerNoStore(t *testing.T) {
	opts := httpapi.Options{OperatorKey: operatorKey}
	s := newServer(t, opts)
	h := httpapi.New(s.v, opts)
	var ok, failed int
	for _, pattern := range httpapi.Routes(h) {
		method, path := concrete(pattern)
		if path == "/{$}" {
			path = "/"
		}
		keys := []string{"", s.mgmt, operatorKey}
		if pattern == "DELETE /tenants/self" {
			// Not the walk's own tenant: a tenant of its own deletes itself.
			other, err := s.v.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{Name: "deleted"})
			if err != nil {
				t.Fatal(err)
			}
			keys[1] = string(other.Application.Key)
		}
		for _, key := range keys {
			var body io.Reader
			if method == "POST" || method == "PUT" || method == "PATCH" {
				body = strings.NewReader("{}")
			}
			req := httptest.NewRequest(method, path, body)
			req.Header.Set("Content-Type", "application/json")
			if method == "PATCH" {
				req.Header.Set("Content-Type", httpapi.MergePatchType)
			}
			if key != "" {
				req.Header.Set(httpapi.APIKeyHeader, key)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code < 400 {
				ok++
			} else {
				failed++
			}
			wantNoStore(t, method+" "+path, rec.Code, rec.Header())
		}
	}
	if ok < 20 || failed < 20 {
		t.Errorf("the walk saw %d answers under 400 and %d errors; want many of each", ok, failed)
	}
	for _, c := range []struct{ method, path string }{{"GET", "/nowhere"}, {"DELETE", "/openapi.json"}} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		wantNoStore(t, c.method+" "+c.path, rec.Code, rec.Header())
	}

	// Answers that carry secrets, over the network.
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("Content-Security-Policy", "script-src 'unsafe-inline'")
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<script>alert(sessionStorage.length)</script>`)
	}))
	defer dest.Close()
	r := s.do(t, "POST", "/applications", s.mgmt, map[string]any{"name": "u", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:create", "token:read", "token:use"}}}})
	wantStatus(t, "POST /applications", r, http.StatusCreated)
	wantNoStore(t, "POST /applications", r.status, r.header)
	var app tokenvault.Application
	r.json(t, &app)
	r = s.do(t, "POST", "/tokens", string(app.Key), map[string]any{"type": "token", "data": "secret"})
	wantStatus(t, "POST /tokens", r, http.StatusCreated)
	wantNoStore(t, "POST /tokens", r.status, r.header)
	var tok tokenvault.Token
	r.json(t, &tok)
	r = s.do(t, "GET", "/tokens/"+tok.ID, string(app.Key), nil)
	wantStatus(t, "GET /tokens/{id}", r, http.StatusOK)
	wantNoStore(t, "GET /tokens/{id}", r.status, r.header)
	r = s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "destination_url": dest.URL})
	wantStatus(t, "POST /proxies", r, http.StatusCreated)
	var p tokenvault.Proxy
	r.json(t, &p)
	r = s.do(t, "POST", "/proxy/x", string(app.Key), `{}`, httpapi.ProxyKeyHeader, p.Key)
	wantStatus(t, "POST /proxy/x", r, http.StatusOK)
	wantNoStore(t, "POST /proxy/x", r.status, r.header)
}
