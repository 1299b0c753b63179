package postgres

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

// Reference numbers for later performance work. Run them against a server
// started as in .ci/run (see the package documentation), which has fsync
// off: they measure round trips and server CPU, not the disk.

func benchKey(i uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte("bench/"), i)
}

// benchStore opens a migrated Store on a fresh schema; poolSize, if not zero,
// sets pool_max_conns (the pgxpool default is max(4, number of CPUs)).
func benchStore(b *testing.B, poolSize int) *Store {
	b.Helper()
	dsn := testDSN(b)
	if poolSize > 0 {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		dsn += fmt.Sprintf("%spool_max_conns=%d", sep, poolSize)
	}
	s := openSchema(b, dsn, freshSchema(b, testDSN(b)), nil)
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkUpdate is one small Put per Update, each to a new key, from 1 or
// 64 goroutines. The ns/op of the concurrent variants is wall time per
// Update, so it is the inverse of throughput.
func BenchmarkUpdate(b *testing.B) {
	for _, bc := range []struct {
		goroutines, pool int
	}{
		{1, 0},
		{64, 0},
		{64, 64},
	} {
		name := fmt.Sprintf("goroutines=%d", bc.goroutines)
		if bc.pool > 0 {
			name += fmt.Sprintf(",pool=%d", bc.pool)
		}
		b.Run(name, func(b *testing.B) {
			s := benchStore(b, bc.pool)
			value := make([]byte, 64)
			var next atomic.Uint64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range bc.goroutines {
				wg.Go(func() {
					for {
						i := next.Add(1)
						if i > uint64(b.N) {
							return
						}
						err := s.Update(b.Context(), func(tx store.Tx) error {
							return tx.Put(benchKey(i), value)
						})
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

// BenchmarkUpdateHotKey is a read-modify-write of one counter per Update
// from 64 goroutines on two Stores (as two processes would): the worst case
// for serialization failures and retries.
func BenchmarkUpdateHotKey(b *testing.B) {
	dsn := testDSN(b)
	schema := freshSchema(b, dsn)
	stores := []*Store{openSchema(b, dsn, schema, nil), openSchema(b, dsn, schema, nil)}
	for _, s := range stores {
		b.Cleanup(func() { s.Close() })
	}
	var next, runs atomic.Uint64
	var wg sync.WaitGroup
	b.ResetTimer()
	for g := range 64 {
		s := stores[g%2]
		wg.Go(func() {
			for next.Add(1) <= uint64(b.N) {
				err := s.Update(b.Context(), func(tx store.Tx) error {
					runs.Add(1)
					v, err := tx.Get([]byte("counter"))
					if err != nil {
						return err
					}
					var n uint64
					if len(v) == 8 {
						n = binary.BigEndian.Uint64(v)
					}
					return tx.Put([]byte("counter"), binary.BigEndian.AppendUint64(nil, n+1))
				})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(runs.Load())/float64(b.N), "runs/op")
}

// BenchmarkPut1000OneTx is 1000 Puts of 64-byte values in one Update: the
// writes go in pipelined batches of 256.
func BenchmarkPut1000OneTx(b *testing.B) {
	s := benchStore(b, 0)
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
}

// BenchmarkScan reads 10,000 keys with one Scan (40 pages).
func BenchmarkScan(b *testing.B) {
	s := benchStore(b, 0)
	value := make([]byte, 64)
	err := s.Update(b.Context(), func(tx store.Tx) error {
		for i := range uint64(10_000) {
			if err := tx.Put(benchKey(i), value); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		n := 0
		err := s.View(b.Context(), func(tx store.Tx) error {
			return tx.Scan([]byte("bench/"), nil, 0, func(k, v []byte) error { n++; return nil })
		})
		if err != nil || n != 10_000 {
			b.Fatalf("Scan = %d keys, %v", n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*10_000), "ns/key")
}

// BenchmarkGroupFailures compares the two ways of isolating a failing
// function in a shared transaction, from 64 goroutines where one Update in
// ten fails: undoing it alone (dropping its buffered writes, or rolling
// back to its savepoint when it has sent them: readback) and rolling back
// the whole transaction, running it alone and the others again (rerun).
// Each Update writes three keys; with readback it reads one back first.
func BenchmarkGroupFailures(b *testing.B) {
	errFail := fmt.Errorf("fails")
	for _, readback := range []bool{false, true} {
		for _, rerun := range []bool{false, true} {
			b.Run(fmt.Sprintf("readback=%v,rerun=%v", readback, rerun), func(b *testing.B) {
				s := benchStore(b, 0)
				s.rerunFailed = rerun
				value := make([]byte, 200)
				var next atomic.Uint64
				b.SetParallelism(64)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						i := next.Add(1)
						err := s.Update(b.Context(), func(tx store.Tx) error {
							for k := range uint64(3) {
								if err := tx.Put(benchKey(i*4+k), value); err != nil {
									return err
								}
								if readback && k == 0 {
									if _, err := tx.Get(benchKey(i * 4)); err != nil {
										return err
									}
								}
							}
							if i%10 == 0 {
								return errFail
							}
							return nil
						})
						if (err != nil) != (i%10 == 0) {
							b.Errorf("Update %d = %v", i, err)
							return
						}
					}
				})
			})
		}
	}
}
