package cli

import (
	"runtime"
	"runtime/debug"
	runtimemetrics "runtime/metrics"
	"sync"
)

// The garbage collector's headroom.
//
// Go starts a collection when the heap has grown by GOGC percent (100) of
// what the last one left live. The server's live heap is small (a few MiB
// with a small store: keys, caches, the connections), so under load it
// collected every 40 ms, each time scanning every goroutine's stack, and
// that was a tenth of its CPU. gcHeadroom keeps the growth allowed before
// a collection at least min bytes: after each collection it sets
// GOGC to max(100, 100 × min / live). A large heap (a million tokens'
// fingerprint index) collects as with GOGC=100; a small one uses at most
// min bytes more than it would. The server does this by default
// (-gc-headroom, 12 MiB); GOGC in the environment, set by an operator who
// tuned it, turns it off.
//
// More is not better: measured with tokenize at 64 connections, 12 MiB
// used a fifth less CPU a request than Go's default, while 64 MiB was a
// fifth slower than the default: a heap that large spreads allocation over
// memory that is no longer in the CPU's caches (BENCHMARKS.md).
type gcHeadroom struct {
	min uint64

	previous int // GOGC before

	mu      sync.Mutex // orders adjust with stop
	stopped bool
	sample  []runtimemetrics.Sample
	percent int // the GOGC last set
	runs    int // adjustments made, for tests
}

// startGCHeadroom starts keeping the collector's headroom at least min
// bytes, until stop is called. It returns a no-op stop when min is 0 or
// GOGC is set.
func startGCHeadroom(min uint64, getenv func(string) string) (stop func()) {
	if min == 0 || getenv("GOGC") != "" {
		return func() {}
	}
	return newGCHeadroom(min).stop
}

func newGCHeadroom(min uint64) *gcHeadroom {
	g := &gcHeadroom{min: min, sample: []runtimemetrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	g.previous = debug.SetGCPercent(100)
	g.percent = 100
	g.adjust()
	g.arm()
	return g
}

// stop puts back the GOGC the headroom found.
func (g *gcHeadroom) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	debug.SetGCPercent(g.previous)
}

// arm registers adjust to run after the next collection: the cleanup of an
// object nothing refers to runs once a collection has found it
// unreachable, and arms the next one.
func (g *gcHeadroom) arm() {
	sentinel := new([16]byte)
	runtime.AddCleanup(sentinel, func(g *gcHeadroom) {
		if g.adjust() {
			g.arm()
		}
	}, g)
}

// adjust sets GOGC from the live heap the last collection left, and
// reports false once stopped.
func (g *gcHeadroom) adjust() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return false
	}
	g.runs++
	runtimemetrics.Read(g.sample)
	percent := headroomPercent(g.sample[0].Value.Uint64(), g.min)
	if percent != g.percent {
		g.percent = percent
		debug.SetGCPercent(percent)
	}
	return true
}

// maxHeadroomPercent bounds GOGC when the live heap is tiny.
const maxHeadroomPercent = 10000

// headroomPercent is the GOGC that lets a heap of live bytes grow by at
// least min bytes, and by no less than GOGC=100 would. Before the first
// collection (live is 0) it is 100.
func headroomPercent(live, min uint64) int {
	switch {
	case live == 0:
		return 100
	case min/live >= maxHeadroomPercent/100:
		return maxHeadroomPercent
	}
	return int(max(100, 100*min/live))
}
