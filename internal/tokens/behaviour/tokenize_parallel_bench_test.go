package tokens_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// BenchmarkTokenizeConcurrency creates one plain token per op from 1 and
// from 64 goroutines on every store (PostgreSQL when
// TOKENVAULT_TEST_POSTGRES_DSN is set). Run with:
//
//	go test -run XXX -bench TokenizeConcurrency -benchtime 3s .
func BenchmarkTokenizeConcurrency(b *testing.B) {
	vaulttest.ForEachStoreB(b, func(b *testing.B, e *vaulttest.Env) {
		creator := e.App(b, tokenvault.Private, "token:create")
		for _, goroutines := range []int{1, 64} {
			b.Run(fmt.Sprintf("goroutines=%d", goroutines), func(b *testing.B) {
				var n atomic.Int64
				b.SetParallelism(max(1, goroutines/runtime.GOMAXPROCS(0)))
				if goroutines == 1 {
					for b.Loop() {
						if _, err := e.V.CreateToken(ctx, creator.Key, tokenvault.TokenRequest{Type: "token", Data: n.Add(1)}); err != nil {
							b.Fatal(err)
						}
					}
					return
				}
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := e.V.CreateToken(ctx, creator.Key, tokenvault.TokenRequest{Type: "token", Data: n.Add(1)}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	})
}
