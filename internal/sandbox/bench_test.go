package sandbox

import (
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// reportPercentiles adds p50 and p99 of durations to b's output.
func reportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), "p99-µs")
}

const trivialCode = `module.exports = async function (req) { return {raw: req.args} }`

var trivialReq = map[string]any{"args": map[string]any{"amount": 42, "currency": "EUR"}}

// BenchmarkRunTrivial is one warm invocation of a trivial reactor in a
// worker: the round trip over the pipes, a fresh goja runtime, the result.
func BenchmarkRunTrivial(b *testing.B) {
	s := New(Options{})
	defer s.Close()
	inv := Invocation{Tenant: "t", Code: trivialCode, Req: trivialReq}
	if _, err := s.Run(b.Context(), inv); err != nil {
		b.Fatal(err)
	}
	var d []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if _, err := s.Run(b.Context(), inv); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(start))
	}
	reportPercentiles(b, d)
}

// BenchmarkWorkerStart is the cost of one worker: exec of this binary,
// its limits and seccomp filter, the ready frame, and its retirement.
func BenchmarkWorkerStart(b *testing.B) {
	s := New(Options{})
	defer s.Close()
	for b.Loop() {
		w, err := startProcess(s.pool.lim)
		if err != nil {
			b.Fatal(err)
		}
		w.retire()
	}
}

// BenchmarkRun64Concurrent: 64 goroutines invoke at once, from 4 tenants,
// on the default pool (16 workers, 8 per tenant): invocations per second
// and the latency each sees, queueing included.
func BenchmarkRun64Concurrent(b *testing.B) {
	s := New(Options{})
	defer s.Close()
	if _, err := s.Run(b.Context(), Invocation{Tenant: "t0", Code: trivialCode, Req: trivialReq}); err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	var d []time.Duration
	var n int
	b.SetParallelism(64 / max(1, testingProcs()))
	b.RunParallel(func(pb *testing.PB) {
		mu.Lock()
		tenant := []string{"t0", "t1", "t2", "t3"}[n%4]
		n++
		mu.Unlock()
		inv := Invocation{Tenant: tenant, Code: trivialCode, Req: trivialReq}
		var local []time.Duration
		for pb.Next() {
			start := time.Now()
			if _, err := s.Run(b.Context(), inv); err != nil {
				b.Error(err)
				return
			}
			local = append(local, time.Since(start))
		}
		mu.Lock()
		d = append(d, local...)
		mu.Unlock()
	})
	reportPercentiles(b, d)
}

func testingProcs() int { return runtime.GOMAXPROCS(0) }
