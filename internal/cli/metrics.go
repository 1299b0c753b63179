package cli

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/prommetrics"
)

// metrics is what GET /metrics serves, with client_golang: the Go runtime
// and process collectors, the Vault's domain metrics (given to it as
// tokenvault.Options.Metrics), its gauges (read from Vault.Stats at each
// scrape), and the request metrics, counted from httpapi's Observe hook.
// Package prommetrics documents every name and label set; no label holds
// a tenant, token or key, and routes are patterns, never paths.
type metrics struct {
	reg     *prometheus.Registry
	vault   *prommetrics.Metrics
	http    *prommetrics.HTTP
	handler http.Handler
}

func newMetrics() *metrics {
	reg := prommetrics.NewRegistry()
	return &metrics{reg: reg, vault: prommetrics.New(reg), http: prommetrics.NewHTTP(reg),
		handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
}

// vaultMetrics is the hook for tokenvault.Options.Metrics: nil (no hook,
// not a typed nil) when m is.
func (m *metrics) vaultMetrics() tokenvault.Metrics {
	if m == nil {
		return nil
	}
	return m.vault
}

// watch adds v's gauges; once, after v is open.
func (m *metrics) watch(v *tokenvault.Vault) {
	m.reg.MustRegister(prommetrics.NewStatsCollector(v))
}

// ServeHTTP answers GET /metrics in the format the scraper asks for (the
// text format by default).
func (m *metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.handler.ServeHTTP(w, r) }
