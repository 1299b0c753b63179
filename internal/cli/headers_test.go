package cli

import (
	"log/slog"
	"testing"
)

// TestOperationalRoutesNoStore: the probes and the metrics, beside the
// API, answer with Cache-Control: no-store and X-Content-Type-Options:
// nosniff, as every API answer does; so do the API's answers through the
// server's handler.
func TestOperationalRoutesNoStore(t *testing.T) {
	v, key := testVault(t)
	h := withConsole(newHandler(v, slog.New(slog.DiscardHandler), slog.New(slog.DiscardHandler), newMetrics(), false, ""), true)
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
}
