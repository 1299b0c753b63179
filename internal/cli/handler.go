package cli

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// newHandler serves the API and, next to it, the operational routes:
//
//	GET /healthz  liveness probe (health.go)
//	GET /readyz   readiness probe (health.go)
//	GET /metrics  Prometheus metrics (metrics.go), when m is not nil
//
// None of the operational routes needs a key; they answer with the API's
// Cache-Control: no-store, X-Content-Type-Options: nosniff and Content-Security-Policy: sandbox. Every API request is logged
// to requests (logging.go; its lines are written in blocks, linebuffer.go)
// and, with metrics, counted, through httpapi's Observe hook,
// which reports the route pattern and never what the caller sent. The
// operational routes are counted but not logged: orchestrators and
// Prometheus call them every few seconds, and a line for each would drown
// the API requests; a failing probe shows in the metrics as
// tokenvault_http_requests_total{route="/readyz",status="503"}.
//
// operatorKey, when set, opens the operator API under /operator/ (see
// operator.go).
func newHandler(v *tokenvault.Vault, log, requests *slog.Logger, m *metrics, trustForwardedFor bool, operatorKey, consolePath string) http.Handler {
	observe := logRequest(requests)
	ops := map[string]http.Handler{"/healthz": http.HandlerFunc(healthz), "/readyz": readyz(v)}
	if m != nil {
		logHook := observe
		observe = func(ctx context.Context, o httpapi.Observation) {
			logHook(ctx, o)
			m.http.Observe(ctx, o)
		}
		ops["/metrics"] = m
	}
	mux := http.NewServeMux()
	for route, h := range ops {
		if m != nil {
			h = httpapi.Observed(route, m.http.Observe, h)
		}
		mux.Handle("GET "+route, h)
	}
	mux.Handle("/", httpapi.New(v, httpapi.Options{Logger: log, Observe: observe, TrustForwardedFor: trustForwardedFor, OperatorKey: operatorKey,
		ConsolePath: consolePath}))
	// The whole mux, so that its own answers (a redirect of an unclean
	// path such as //applications) carry the headers too.
	h := httpapi.NoStore(mux)
	if m != nil {
		return m.http.InFlight(h)
	}
	return h
}
