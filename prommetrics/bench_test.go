package prommetrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/prommetrics"
	"github.com/tokenvault/tokenvault/store/memory"
)

// BenchmarkTokenizeMetrics: one token per Tokenize on a memory store (so
// that the store's fsync does not hide the cost), without Metrics and with
// prommetrics, to show what measuring costs on the write path.
func BenchmarkTokenizeMetrics(b *testing.B) {
	for _, bc := range []struct {
		name    string
		metrics tokenvault.Metrics
	}{{"none", nil}, {"prometheus", prommetrics.New(prometheus.NewRegistry())}} {
		b.Run("metrics="+bc.name, func(b *testing.B) {
			master := make([]byte, 32)
			v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Metrics: bc.metrics, Keys: tokenvault.KeyOptions{MasterKey: master}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
			if err != nil {
				b.Fatal(err)
			}
			defer v.Close()
			boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
				Name: "w", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate},
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Tokenize(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "4111111111111111"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
