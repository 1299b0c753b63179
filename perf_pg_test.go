package tokenvault_test

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// BenchmarkTokenizeDurablePG is BenchmarkTokenizeDurable on PostgreSQL (the
// server named by TOKENVAULT_TEST_POSTGRES_DSN, with whatever durability it
// is configured with: run it against a server with fsync on to measure
// durable commits). Concurrent tokenizations share transactions through
// store/postgres's group commit; none returns before its commit.
//
//	go test -run XXX -bench TokenizeDurablePG -benchmem .
func BenchmarkTokenizeDurablePG(b *testing.B) {
	e := newEnvOn(b, openPG(b))
	creator := e.app(b, tokenvault.Private, "token:create")
	var n atomic.Int64
	create := func() error {
		_, err := e.v.CreateToken(ctx, creator.Key, tokenvault.TokenRequest{Type: "token", Data: n.Add(1)})
		return err
	}
	b.Run("goroutines=1", func(b *testing.B) {
		for b.Loop() {
			if err := create(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("goroutines=64", func(b *testing.B) {
		b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := create(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
