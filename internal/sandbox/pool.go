package sandbox

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// ErrBusy is returned when an invocation could not get a worker before its
// deadline: its tenant had Options.PerTenant invocations in progress, or
// every worker was busy. Nothing ran.
var ErrBusy = errors.New("sandbox: too many invocations in progress; retry later")

// ErrClosed is returned by invocations after Close.
var ErrClosed = errors.New("sandbox: closed")

// Idle workers beyond keepIdle are retired after idleTimeout.
const (
	keepIdle     = 2
	idleTimeout  = 30 * time.Second
	janitorEvery = 10 * time.Second
)

// pool holds the worker processes and the admission of invocations: a
// global bound (one slot per worker in use) and a bound per tenant, so
// that one tenant can hold at most PerTenant workers however many calls it
// makes, and the others still get theirs.
type pool struct {
	lim       initLimits
	slots     chan struct{}
	perTenant int

	mu      sync.Mutex
	idle    []*process
	tenants map[string]*tenantGate
	closed  bool

	stopJanitor chan struct{}
	janitorDone chan struct{}

	// alive counts the worker processes started and not yet retired,
	// idle or in use, for Stats.
	alive atomic.Int64
}

// tenantGate bounds one tenant's invocations; users counts holders and
// waiters so the gate is dropped exactly when nobody needs it.
type tenantGate struct {
	slots chan struct{}
	users int
}

func newPool(workers, perTenant int, lim initLimits) *pool {
	p := &pool{
		lim: lim, slots: make(chan struct{}, workers), perTenant: perTenant,
		tenants: map[string]*tenantGate{}, stopJanitor: make(chan struct{}), janitorDone: make(chan struct{}),
	}
	go p.janitor()
	return p
}

// admit waits, until deadline or ctx ends, for a slot of tenant and then a
// global one. The release function gives both back.
func (p *pool) admit(ctx context.Context, tenant string, deadline time.Time) (release func(), err error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	g := p.tenants[tenant]
	if g == nil {
		g = &tenantGate{slots: make(chan struct{}, p.perTenant)}
		p.tenants[tenant] = g
	}
	g.users++
	p.mu.Unlock()
	leave := func() {
		p.mu.Lock()
		if g.users--; g.users == 0 {
			delete(p.tenants, tenant)
		}
		p.mu.Unlock()
	}

	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	if err := wait(ctx, timer.C, g.slots); err != nil {
		leave()
		return nil, err
	}
	if err := wait(ctx, timer.C, p.slots); err != nil {
		<-g.slots
		leave()
		return nil, err
	}
	return func() {
		<-p.slots
		<-g.slots
		leave()
	}, nil
}

// wait puts a token into slots, or fails when ctx ends or expired fires.
func wait(ctx context.Context, expired <-chan time.Time, slots chan struct{}) error {
	select {
	case slots <- struct{}{}:
		return nil
	default:
	}
	select {
	case slots <- struct{}{}:
		return nil
	case <-expired:
		return ErrBusy
	case <-ctx.Done():
		return ErrBusy
	}
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
// stopped, or broke the protocol), or near its lifetime CPU limit, is
// retired instead.
func (p *pool) put(w *process, healthy bool) {
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
	return int(p.alive.Load()), len(p.slots), cap(p.slots)
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
