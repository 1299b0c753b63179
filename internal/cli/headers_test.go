package cli

import (
	"log/slog"
	"testing"

	"github.com/tokenvault/tokenvault/console"
)

// TestOperationalRoutesNoStore: the probes and the metrics, beside the
// API, answer with Cache-Control: no-store and X-Content-Type-Options:
// nosniff, as every API answer does; so do the API's answers through the
// server's handler. The console's /console redirect carries the console's
// headers, and /console/%ff is a 404.
func TestOperationalRoutesNoStore(t *testing.T) {
	v, key := testVault(t)
	h := withConsole(newHandler(v, slog.New(slog.DiscardHandler), slog.New(slog.DiscardHandler), newMetrics(), false, "", ""), true)
	for _, c := range []struct{ path, key string }{
		{"/healthz", ""}, {"/readyz", ""}, {"/metrics", ""}, {"/tenants/self", key}, {"/tenants/self", ""}, {"/nowhere", ""},
	} {
		res := serve(h, "GET", c.path, c.key)
		for name, want := range map[string]string{"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} {
			if got := res.Header().Get(name); got != want {
				t.Errorf("GET %s = %d: %s = %q, want %q", c.path, res.Code, name, got, want)
			}
		}
	}
	// The console's redirect is the console's, with its headers; a path
	// that names no file is its 404.
	res := serve(h, "GET", "/console", "")
	if res.Code/100 != 3 || res.Header().Get("Content-Security-Policy") != console.ContentSecurityPolicy {
		t.Errorf("GET /console = %d, CSP %q; want a redirect with the console's CSP", res.Code, res.Header().Get("Content-Security-Policy"))
	}
	if res := serve(h, "GET", "/console/%ff", ""); res.Code != 404 {
		t.Errorf("GET /console/%%ff = %d %q, want 404", res.Code, res.Body.String())
	}
	// Unclean paths: the console's answer, with its headers; the API's
	// (a redirect of its mux), with the API's.
	for _, path := range []string{"/console//x", "/console/x/../../etc"} {
		if res := serve(h, "GET", path, ""); res.Header().Get("Content-Security-Policy") != console.ContentSecurityPolicy || res.Code == 500 {
			t.Errorf("GET %s = %d, CSP %q; want the console's answer", path, res.Code, res.Header().Get("Content-Security-Policy"))
		}
	}
	res = serve(h, "GET", "//applications", "")
	if res.Header().Get("Cache-Control") != "no-store" || res.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET //applications = %d, headers %v; want no-store and nosniff", res.Code, res.Header())
	}
}
