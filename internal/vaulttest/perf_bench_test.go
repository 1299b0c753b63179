package vaulttest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
	"github.com/tokenvault/tokenvault/store/memory"
)

// The benchmarks of the performance issue that tokens_bench_test.go does
// not hold. Run with: go test -run XXX -bench . -benchmem .

// BenchmarkTokenizeNested50 tokenizes an object of 50 values nested three
// levels deep, in one request.
func BenchmarkTokenizeNested50(b *testing.B) {
	vaulttest.ForEachStoreB(b, func(b *testing.B, e *vaulttest.Env) {
		creator := e.App(b, tokenvault.Private, "token:create")
		body := map[string]any{}
		for i := range 5 {
			group := map[string]any{}
			for j := range 10 {
				group[fmt.Sprintf("f%d", j)] = map[string]any{"value": fmt.Sprintf("v-%d-%d", i, j)}
			}
			body[fmt.Sprintf("g%d", i)] = group
		}
		for b.Loop() {
			if _, err := e.V.Tokenize(ctx, creator.Key, body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTokenizeDedupeHit tokenizes a value whose fingerprint exists, so
// the existing token is returned.
func BenchmarkTokenizeDedupeHit(b *testing.B) {
	vaulttest.ForEachStoreB(b, func(b *testing.B, e *vaulttest.Env) {
		// Only a key that may read the tokens in clear deduplicates
		// against them.
		creator := e.Revealer(b, "token:create", "token:read")
		req := tokenvault.TokenRequest{Type: "token", Data: "123-45-6789", DeduplicateToken: true}
		first, err := e.V.CreateToken(ctx, creator.Key, req)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			tok, err := e.V.CreateToken(ctx, creator.Key, req)
			if err != nil || tok.ID != first.ID {
				b.Fatalf("dedupe = %v, %v", tok, err)
			}
		}
	})
}

// BenchmarkGetTokenTransform reads a card with each transform.
func BenchmarkGetTokenTransform(b *testing.B) {
	vaulttest.ForEachStoreB(b, func(b *testing.B, e *vaulttest.Env) {
		tok := e.Token(b, vaulttest.CardRequest(vaulttest.Visa))
		for _, transform := range []string{"redact", "mask", "reveal"} {
			reader := e.Reader(b, transform, "token:read")
			b.Run("transform="+transform, func(b *testing.B) {
				for b.Loop() {
					if _, err := e.V.GetToken(ctx, reader.Key, tok.ID); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	})
}

// BenchmarkAuthenticate measures key authentication alone (ListPermissions
// does nothing else), with the cache of recent keys and without it.
func BenchmarkAuthenticate(b *testing.B) {
	for _, bc := range []struct {
		name string
		s    func() store.Store
	}{
		{"cached", func() store.Store { return memory.New() }},
		{"uncached", func() store.Store { return vaulttest.SharedStore{Store: memory.New()} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := vaulttest.NewEnvOn(b, bc.s())
			key := e.Reader(b, "mask", "token:read").Key
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.V.ListPermissions(ctx, key, tokenvault.Private); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBatchVsRawPuts compares, in one run, tokenizing 1,000 values in
// one request with writing 1,000 raw keys of the same size in one bbolt
// transaction, the floor the performance issue measures against.
func BenchmarkBatchVsRawPuts(b *testing.B) {
	body := make([]any, 1000)
	for i := range body {
		body[i] = fmt.Sprintf("value-%d", i)
	}
	b.Run("raw-1000-puts", func(b *testing.B) {
		s, err := bolt.Open(filepath.Join(b.TempDir(), "raw.db"), &bolt.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		value := make([]byte, 200)
		n := 0
		for b.Loop() {
			err := s.Update(context.Background(), func(tx store.Tx) error {
				for range 1000 {
					n++
					if err := tx.Put(fmt.Appendf(nil, "k/%016x", n), value); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tokenize-1000", func(b *testing.B) {
		s, err := bolt.Open(filepath.Join(b.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		e := vaulttest.NewEnvOn(b, s)
		creator := e.App(b, tokenvault.Private, "token:create")
		for b.Loop() {
			if _, err := e.V.Tokenize(ctx, creator.Key, body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTokenizeDurable creates one token per op on bbolt with fsync on,
// from 1 and 64 goroutines: concurrent tokenizations share commits (and
// fsyncs) through store/bolt's group commit, and none returns before its commit.
func BenchmarkTokenizeDurable(b *testing.B) {
	s, err := bolt.Open(filepath.Join(b.TempDir(), "vault.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	benchTokenizeDurable(b, vaulttest.NewEnvOn(b, s))
}

// benchTokenizeDurable creates one plain token per op in e, from one
// goroutine and from 64.
func benchTokenizeDurable(b *testing.B, e *vaulttest.Env) {
	creator := e.App(b, tokenvault.Private, "token:create")
	var n atomic.Int64
	create := func() error {
		_, err := e.V.CreateToken(ctx, creator.Key, tokenvault.TokenRequest{Type: "token", Data: n.Add(1)})
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
