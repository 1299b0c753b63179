package bolt

import (
	"encoding/binary"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

// Reference numbers for later performance work. The durable variants fsync
// on every commit, so they measure the disk as much as the code.

var benchOptions = []struct {
	name string
	opts *Options
}{
	{"sync", nil},
	{"nosync", &Options{NoSync: true}},
}

func benchStore(b *testing.B, opts *Options) *Store {
	b.Helper()
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"), opts)
	if err != nil {
		b.Fatalf("Open() = %v", err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func benchKey(i uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte("bench/"), i)
}

// BenchmarkUpdateSerial is one small Put per Update from one goroutine: the
// path that must not pay the batch delay.
func BenchmarkUpdateSerial(b *testing.B) {
	for _, bo := range benchOptions {
		b.Run(bo.name, func(b *testing.B) {
			s := benchStore(b, bo.opts)
			value := make([]byte, 64)
			var i uint64
			for b.Loop() {
				i++
				err := s.Update(b.Context(), func(tx store.Tx) error {
					return tx.Put(benchKey(i), value)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUpdateParallel is one small Put per Update from GOMAXPROCS
// goroutines (raise with -cpu): the path batching is for.
func BenchmarkUpdateParallel(b *testing.B) {
	for _, bo := range benchOptions {
		b.Run(bo.name, func(b *testing.B) {
			s := benchStore(b, bo.opts)
			var next atomic.Uint64
			b.RunParallel(func(pb *testing.PB) {
				value := make([]byte, 64)
				for pb.Next() {
					i := next.Add(1)
					err := s.Update(b.Context(), func(tx store.Tx) error {
						return tx.Put(benchKey(i), value)
					})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkPut1000OneTx is 1000 Puts of 64-byte values in one Update.
func BenchmarkPut1000OneTx(b *testing.B) {
	for _, bo := range benchOptions {
		b.Run(bo.name, func(b *testing.B) {
			s := benchStore(b, bo.opts)
			value := make([]byte, 64)
			var base uint64
			for b.Loop() {
				err := s.Update(b.Context(), func(tx store.Tx) error {
					for j := range uint64(1000) {
						if err := tx.Put(benchKey(base+j), value); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				base += 1000
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/put")
		})
	}
}
