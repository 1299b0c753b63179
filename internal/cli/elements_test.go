package cli

import (
	"log/slog"
	"strings"
	"testing"
)

// TestElementsFlag: the hosted elements are served under /elements/v1/
// by default, with their headers, next to the API (a frame asked for
// with the management key embeds nowhere); -elements=false or
// TOKENVAULT_ELEMENTS=false leaves the path to the API (a 404 problem).
func TestElementsFlag(t *testing.T) {
	v, key := testVault(t)
	for _, c := range []struct {
		args []string
		env  string
		want bool
	}{{nil, "", true}, {[]string{"-elements=false"}, "", false}, {nil, "false", false}, {[]string{"-elements"}, "false", true}} {
		cfg, err := parseConfig(c.args, func(k string) string { return map[string]string{"TOKENVAULT_ELEMENTS": c.env}[k] })
		if err != nil || cfg.elements != c.want {
			t.Fatalf("parseConfig(%q, TOKENVAULT_ELEMENTS=%q).elements = %v, %v; want %v", c.args, c.env, cfg.elements, err, c.want)
		}
		h := withConsole(withElements(newHandler(v, slog.New(slog.DiscardHandler), slog.New(slog.DiscardHandler), newMetrics(), false, "", ""), v, cfg.elements, false), true)
		res := serve(h, "GET", "/elements/v1/elements.js", "")
		frame := serve(h, "GET", "/elements/v1/card-number.html?key="+key+"&origin=https://shop.example", "")
		if c.want {
			wantCode(t, res, 200)
			if res.Header().Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(res.Body.String(), "TokenVaultElements") {
				t.Errorf("GET /elements/v1/elements.js: %v %.100s", res.Header(), res.Body.String())
			}
			wantCode(t, frame, 200)
			if csp := frame.Header().Get("Content-Security-Policy"); !strings.HasSuffix(csp, "frame-ancestors 'none'") {
				t.Errorf("a frame for a management key: CSP %q, want frame-ancestors 'none'", csp)
			}
		} else {
			wantCode(t, res, 404)
			if ct := res.Header().Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("GET /elements/v1/elements.js with the elements off: Content-Type %q", ct)
			}
		}
		wantCode(t, serve(h, "GET", "/tenants/self", key), 200)
		wantCode(t, serve(h, "GET", "/console/", ""), 200)
	}
}

// TestServeElements: tokenvault serve serves the elements at
// /elements/v1/ by default, and not with -elements=false.
func TestServeElements(t *testing.T) {
	addr, _, stop := start(t, t.TempDir(), nil)
	code, body := get(t, "http://"+addr+"/elements/v1/elements.js", "")
	stop()
	if code != 200 || !strings.Contains(body, "TokenVaultElements") {
		t.Errorf("GET /elements/v1/elements.js = %d %.200q", code, body)
	}
	addr, _, stop = startWith(t, t.TempDir(), nil, "-elements=false")
	defer stop()
	if code, _ := get(t, "http://"+addr+"/elements/v1/elements.js", ""); code != 404 {
		t.Errorf("GET /elements/v1/elements.js with -elements=false = %d, want 404", code)
	}
}
