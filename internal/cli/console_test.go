package cli

import (
	"log/slog"
	"strings"
	"testing"
)

// TestConsoleFlag: the console is served under /console/ by default, with
// its security headers, next to the API; -console=false or
// TOKENVAULT_CONSOLE=false leaves /console/ to the API (a 404 problem).
func TestConsoleFlag(t *testing.T) {
	v, key := testVault(t)
	for _, c := range []struct {
		args []string
		env  string
		want bool
	}{{nil, "", true}, {[]string{"-console=false"}, "", false}, {nil, "false", false}, {[]string{"-console"}, "false", true}} {
		cfg, err := parseConfig(c.args, func(k string) string { return map[string]string{"TOKENVAULT_CONSOLE": c.env}[k] })
		if err != nil || cfg.console != c.want {
			t.Fatalf("parseConfig(%q, TOKENVAULT_CONSOLE=%q).console = %v, %v; want %v", c.args, c.env, cfg.console, err, c.want)
		}
		h := withConsole(newHandler(v, slog.New(slog.DiscardHandler), slog.New(slog.DiscardHandler), newMetrics(), false, "", ""), cfg.console)
		res := serve(h, "GET", "/console/", "")
		if c.want {
			wantCode(t, res, 200)
			if csp := res.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(res.Body.String(), "app.js") {
				t.Errorf("GET /console/: CSP %q, body %.200s", csp, res.Body.String())
			}
			if r := serve(h, "GET", "/console", ""); r.Code/100 != 3 || r.Header().Get("Location") != "/console/" {
				t.Errorf("GET /console: %d to %q, want a redirect to /console/", r.Code, r.Header().Get("Location"))
			}
		} else {
			wantCode(t, res, 404)
			if ct := res.Header().Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("GET /console/ with the console off: Content-Type %q", ct)
			}
		}
		// The API and the probes answer either way.
		wantCode(t, serve(h, "GET", "/tenants/self", key), 200)
		wantCode(t, serve(h, "GET", "/healthz", ""), 200)
	}
	if _, err := parseConfig(nil, func(k string) string { return map[string]string{"TOKENVAULT_CONSOLE": "maybe"}[k] }); err == nil {
		t.Error("TOKENVAULT_CONSOLE=maybe accepted")
	}
}

// TestServeConsole: tokenvault serve serves the console at /console/ by
// default, and says where in its listening line and at GET /; not with
// -console=false, and then neither says it.
func TestServeConsole(t *testing.T) {
	addr, out, stop := start(t, t.TempDir(), nil)
	code, body := get(t, "http://"+addr+"/console/", "")
	_, root := get(t, "http://"+addr+"/", "")
	stop()
	if code != 200 || !strings.Contains(body, `src="app.js"`) {
		t.Errorf("GET /console/ = %d %.200q", code, body)
	}
	if !strings.Contains(out.String(), "console=http://"+addr+"/console/") {
		t.Errorf("the log does not say where the console is:\n%s", out)
	}
	if !strings.Contains(root, `"console":"/console/"`) {
		t.Errorf("GET / = %s, want the console named", root)
	}
	addr, out, stop = startWith(t, t.TempDir(), nil, "-console=false")
	defer stop()
	if code, _ := get(t, "http://"+addr+"/console/", ""); code != 404 {
		t.Errorf("GET /console/ with -console=false = %d, want 404", code)
	}
	if _, root := get(t, "http://"+addr+"/", ""); strings.Contains(root, "console") || strings.Contains(out.String(), "console=") {
		t.Errorf("with -console=false, GET / = %s and the log %s name a console", root, out)
	}
}
