package reactors_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// BenchmarkInvokeReactor invokes a trivial reactor, warm: the code is
// compiled once and cached; each op authorizes, logs, runs and returns.
func BenchmarkInvokeReactor(b *testing.B) {
	vaulttest.ForEachStoreB(b, func(b *testing.B, e *vaulttest.Env) {
		r, err := e.V.CreateReactor(ctx, e.Mgmt, tokenvault.CreateReactorRequest{Name: "echo",
			Code: `module.exports = async function (req) { return {raw: req.args} }`})
		if err != nil {
			b.Fatal(err)
		}
		key := e.Reader(b, "reveal", "token:use").Key
		req := tokenvault.InvokeReactorRequest{Args: map[string]any{"amount": 42, "currency": "EUR"}}
		if _, err := e.V.InvokeReactor(ctx, key, r.ID, req); err != nil {
			b.Fatal(err)
		}
		var d []time.Duration
		b.ReportAllocs()
		for b.Loop() {
			start := time.Now()
			if _, err := e.V.InvokeReactor(ctx, key, r.ID, req); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(start))
		}
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	})
}
