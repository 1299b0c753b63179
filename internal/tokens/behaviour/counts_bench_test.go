package tokens_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
)

// BenchmarkCountBacklog tokenizes from 64 goroutines on every store
// (PostgreSQL when TOKENVAULT_TEST_POSTGRES_DSN is set) while a sampler
// counts, every 5 ms, the delta rows of the tenant's count of tokens of
// type token: what a read of that count sums beside its base row. It
// reports the largest backlog it saw (max-rows) and the mean (mean-rows).
//
//	go test -run XXX -bench CountBacklog -benchtime 2000x .
func BenchmarkCountBacklog(b *testing.B) {
	vaulttest.ForEachStoreB(b, func(b *testing.B, e *vaulttest.Env) {
		creator := e.App(b, tokenvault.Private, "token:create")
		prefix := []byte("tenant/" + e.Boot.Tenant.ID + "/count/tok-t/token/+/")
		var most, sum, samples atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				n := int64(0)
				_ = e.Store.View(ctx, func(tx store.Tx) error {
					return tx.Scan(prefix, nil, 0, func(_, _ []byte) error { n++; return nil })
				})
				if n > most.Load() {
					most.Store(n)
				}
				sum.Add(n)
				samples.Add(1)
			}
		})
		var n atomic.Int64
		b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := e.V.CreateToken(ctx, creator.Key, tokenvault.TokenRequest{Type: "token", Data: n.Add(1)}); err != nil {
					b.Error(err)
					return
				}
			}
		})
		close(stop)
		wg.Wait()
		b.ReportMetric(float64(most.Load()), "max-rows")
		if s := samples.Load(); s > 0 {
			b.ReportMetric(float64(sum.Load())/float64(s), "mean-rows")
		}
	})
}
