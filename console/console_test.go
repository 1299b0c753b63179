package console_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/console"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestHeaders: every file of the console, and its errors, carry the
// security headers; index.html is never cached.
func TestHeaders(t *testing.T) {
	srv := httptest.NewServer(console.Handler())
	defer srv.Close()
	for _, c := range []struct {
		path, status, cache, ctype string
	}{
		{"/console/", "200", "no-store", "text/html"},
		{"/console/index.html", "200", "no-store", "text/html"},
		{"/console/app.js", "200", "no-cache", "text/javascript"},
		{"/console/console.css", "200", "no-cache", "text/css"},
		{"/console/pages/tokens.js", "200", "no-cache", "text/javascript"},
		{"/console/missing.js", "404", "", ""}, // http.Error drops Cache-Control
	} {
		res, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		h := res.Header
		if got := res.Status[:3]; got != c.status {
			t.Errorf("GET %s: status %s, want %s", c.path, res.Status, c.status)
		}
		for name, want := range map[string]string{
			"Content-Security-Policy": console.ContentSecurityPolicy,
			"X-Content-Type-Options":  "nosniff",
			"Referrer-Policy":         "no-referrer",
			"X-Frame-Options":         "DENY",
			"Cache-Control":           c.cache,
		} {
			if got := h.Get(name); got != want {
				t.Errorf("GET %s: %s = %q, want %q", c.path, name, got, want)
			}
		}
		if !strings.HasPrefix(h.Get("Content-Type"), c.ctype) {
			t.Errorf("GET %s: Content-Type %q, want %s", c.path, h.Get("Content-Type"), c.ctype)
		}
	}
	csp := console.ContentSecurityPolicy
	for _, want := range []string{"default-src 'self'", "script-src 'self';", "style-src 'self';", "img-src 'self' data:;",
		"connect-src 'self';", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "*", "http:", "https:"} {
		if strings.Contains(csp, bad) {
			t.Errorf("CSP %q allows %q", csp, bad)
		}
	}
	req, _ := http.NewRequest("POST", srv.URL+"/console/", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("POST /console/: %s, CSP %q", res.Status, res.Header.Get("Content-Security-Policy"))
	}
}

// TestAPIAloneServesNoConsole: httpapi.New does not serve the console; a
// program that mounts the API alone has none (it mounts Handler itself).
func TestAPIAloneServesNoConsole(t *testing.T) {
	key := make([]byte, 32)
	rand.Read(key)
	v, err := tokenvault.Open(context.Background(), tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: key},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	srv := httptest.NewServer(httpapi.New(v, httpapi.Options{}))
	defer srv.Close()
	for _, path := range []string{"/console/", "/console/app.js"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound || res.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("httpapi.New alone: GET %s = %s (%s), want the API's 404", path, res.Status, res.Header.Get("Content-Type"))
		}
	}
}
