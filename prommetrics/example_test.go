package prommetrics_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/prommetrics"
)

// A host program measures its Vault and serves the metrics next to the API.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "vault")
	defer os.RemoveAll(dir)
	masterKey := make([]byte, 32)
	rand.Read(masterKey)

	reg := prommetrics.NewRegistry() // go_* and process_*
	m := prommetrics.New(reg)        // tokens, code runs, webhooks, sweeps, bbolt commits
	v, err := tokenvault.Open(ctx, tokenvault.Options{
		Path:    filepath.Join(dir, "vault.db"),
		Metrics: m,
		Keys:    tokenvault.KeyOptions{MasterKey: masterKey},
	})
	if err != nil {
		panic(err)
	}
	defer v.Close()
	reg.MustRegister(prommetrics.NewStatsCollector(v)) // workers, async work: read at each scrape
	requests := prommetrics.NewHTTP(reg)

	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/", httpapi.New(v, httpapi.Options{Observe: requests.Observe}))
	handler := requests.InFlight(mux) // serve it with http.Server
	_ = handler

	boot, _ := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	fmt.Println(boot.Tenant.Name)
	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() == "tokenvault_code_workers_max" {
			fmt.Println(f.GetName(), f.GetMetric()[0].GetGauge().GetValue())
		}
	}
	// Output:
	// Acme
	// tokenvault_code_workers_max 16
}
