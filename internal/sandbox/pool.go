package sandbox

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// ErrBusy is returned when an invocation could not get a worker before its
// deadline: its tenant had Options.PerTenant invocations in progress, or
// every worker it may take was busy (admission.go). Nothing ran.
var ErrBusy = errors.New("sandbox: too many invocations in progress; retry later")

// ErrClosed is returned by invocations after Close.
var ErrClosed = errors.New("sandbox: closed")

// Idle workers beyond keepIdle are retired after idleTimeout.
const (
	keepIdle     = 2
	idleTimeout  = 30 * time.Second
	janitorEvery = 10 * time.Second
)

// pool holds the worker processes and the admission of invocations to
// them (admission.go).
type pool struct {
	lim   initLimits
	admit *admission

	mu     sync.Mutex
	idle   []*process
	closed bool

	stopJanitor chan struct{}
	janitorDone chan struct{}

	// alive counts the worker processes started and not yet retired,
	// idle or in use, for Stats; retiredLarge, the workers retired
	// after a large invocation (put).
	alive        atomic.Int64
	retiredLarge atomic.Int64
}

func newPool(workers, perTenant int, lim initLimits) *pool {
	p := &pool{
		lim: lim, admit: newAdmission(workers, perTenant),
		stopJanitor: make(chan struct{}), janitorDone: make(chan struct{}),
	}
	go p.janitor()
	return p
}

// get returns an idle worker, the most recently used first (its compiled
// programs are the likeliest to be wanted), or starts one. The caller holds
// a global slot, so the number of workers never exceeds Workers.
func (p *pool) get() (*process, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return w, nil
	}
	p.mu.Unlock()
	w, err := startProcess(p.lim)
	if err == nil {
		p.alive.Add(1)
	}
	return w, err
}

// put gives a worker back after use. A worker that is not healthy (it was
// stopped, or broke the protocol), near its lifetime CPU limit, or whose
// last run was large (a request or answer over retireIOBytes, or a heap
// that grew past retireHeapBytes: see runOn) is retired instead; the next
// invocation that needs a worker starts a fresh one.
func (p *pool) put(w *process, healthy bool) {
	if healthy && w.large {
		p.retiredLarge.Add(1)
		healthy = false
	}
	if healthy && w.cpu+maxRunSeconds < float64(p.lim.CPUSeconds) {
		p.mu.Lock()
		if !p.closed {
			w.idleAt = time.Now()
			p.idle = append(p.idle, w)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
	p.alive.Add(-1)
	go w.retire()
}

// janitor retires workers idle for longer than idleTimeout, keeping
// keepIdle warm ones.
func (p *pool) janitor() {
	defer close(p.janitorDone)
	t := time.NewTicker(janitorEvery)
	defer t.Stop()
	for {
		select {
		case <-p.stopJanitor:
			return
		case <-t.C:
		}
		var old []*process
		p.mu.Lock()
		keep := p.idle[:0]
		for i, w := range p.idle {
			// idle is oldest first; the newest keepIdle stay whatever their age.
			if i < len(p.idle)-keepIdle && time.Since(w.idleAt) > idleTimeout {
				old = append(old, w)
			} else {
				keep = append(keep, w)
			}
		}
		p.idle = keep
		p.mu.Unlock()
		p.alive.Add(-int64(len(old)))
		for _, w := range old {
			w.retire()
		}
	}
}

// stats returns the workers alive, the slots in use (runs and checks
// holding a worker, or about to start one) and the most workers.
func (p *pool) stats() (alive, busy, capacity int) {
	return int(p.alive.Load()), p.admit.inUse(), p.admit.workers
}

// close retires every idle worker; workers in use are retired as they are
// given back.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.admit.close()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	p.alive.Add(-int64(len(idle)))
	close(p.stopJanitor)
	<-p.janitorDone
	var wg sync.WaitGroup
	for _, w := range idle {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.retire()
		}()
	}
	wg.Wait()
}
