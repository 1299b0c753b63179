package jsrt

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/dlclark/regexp2/v2"
)

// The memory guard. goja has no allocation accounting, so the guard watches
// the process heap: one monitor goroutine (running only while invocations
// are) samples the bytes of heap objects every guardInterval. For each
// running invocation it keeps a baseline, the heap when the invocation began
// lowered to the smallest sample seen since (a collection that frees
// garbage which existed before the invocation must not hide later growth).
// When the heap exceeds a baseline by more than the limit, the growth may
// still be garbage, so the monitor forces a collection (at most one per
// guardGCInterval for the whole process) and stops the invocations whose
// limit the heap still exceeds.
//
// It is approximate by nature: the heap is shared, so an invocation is
// charged for whatever the process allocated while it ran, and an invocation
// that grows the heap is stopped somewhere between its limit and about twice
// its limit (growth it made before a collection lowered its baseline is not
// counted). It exists to stop runaway code, not to account.

const (
	guardInterval   = 5 * time.Millisecond
	guardGCInterval = 100 * time.Millisecond
)

// regexpMatchTimeout bounds one match of a regular expression that needs
// backtracking (goja hands those to regexp2; the others use Go's regexp,
// which is linear). A match is a single built-in call that goja cannot
// interrupt, so without this a catastrophic pattern would keep a CPU busy
// long after its invocation timed out. A match that times out fails to
// match. regexp2 is used in this module only by goja.
const regexpMatchTimeout = 2 * time.Second

func init() {
	regexp2.DefaultMatchTimeout = regexpMatchTimeout
}

// guard is the process's memory monitor.
var guard = &heapGuard{watches: map[*heapWatch]struct{}{}}

type heapGuard struct {
	mu         sync.Mutex
	watches    map[*heapWatch]struct{}
	running    bool
	last       uint64 // latest sample, valid while running
	lastForced time.Time
	sample     [1]metrics.Sample
}

type heapWatch struct {
	limit uint64
	base  uint64
	trip  func()
}

// watch starts guarding one invocation; trip is called (once, from the
// monitor goroutine) when the invocation exceeds limit.
func (g *heapGuard) watch(limit uint64, trip func()) *heapWatch {
	w := &heapWatch{limit: limit, trip: trip}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running {
		w.base = g.last
	} else {
		w.base = g.read()
		g.last = w.base
		g.running = true
		go g.loop()
	}
	g.watches[w] = struct{}{}
	return w
}

// release stops guarding an invocation.
func (g *heapGuard) release(w *heapWatch) {
	g.mu.Lock()
	delete(g.watches, w)
	g.mu.Unlock()
}

// read samples the heap; callers hold mu.
func (g *heapGuard) read() uint64 {
	g.sample[0].Name = "/memory/classes/heap/objects:bytes"
	metrics.Read(g.sample[:])
	if g.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return g.sample[0].Value.Uint64()
}

func (g *heapGuard) loop() {
	tick := time.NewTicker(guardInterval)
	defer tick.Stop()
	for range tick.C {
		if !g.check() {
			return
		}
	}
}

// check is one tick of the monitor; false when there is nothing to watch
// and the monitor stops.
func (g *heapGuard) check() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.watches) == 0 {
		g.running = false
		return false
	}
	heap := g.read()
	g.last = heap
	if !g.over(heap) || time.Since(g.lastForced) < guardGCInterval {
		return true
	}
	// The growth may be garbage: collect, then look again. Invocations
	// keep running meanwhile; the lock only delays watch and release.
	g.mu.Unlock()
	runtime.GC()
	g.mu.Lock()
	g.lastForced = time.Now()
	heap = g.read()
	g.last = heap
	for w := range g.watches {
		if heap > w.base && heap-w.base > w.limit {
			delete(g.watches, w)
			w.trip()
		}
	}
	return true
}

// over lowers baselines to heap and reports whether any watch exceeds its
// limit; callers hold mu.
func (g *heapGuard) over(heap uint64) bool {
	over := false
	for w := range g.watches {
		if heap < w.base {
			w.base = heap
		}
		if heap-w.base > w.limit {
			over = true
		}
	}
	return over
}
