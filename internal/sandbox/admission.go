package sandbox

import (
	"context"
	"sync"
	"time"
)

// admission decides which invocation gets the next worker. Running code
// cannot be pre-empted, so fairness must be kept at admission, and with
// code that runs for seconds a queue alone does not bound anyone's wait:
// two tenants whose slow code holds every worker make a third wait for
// one of those runs to end. So the pool is in two parts:
//
//   - the shared part, perTenant workers: a tenant's second and later
//     invocations at once run only while fewer than perTenant workers are
//     busy in all (free > reserve);
//   - the reserve, workers − perTenant: any free worker, reserve included,
//     goes to a tenant that has nothing running.
//
// Since only tenants with nothing running enter the reserve, each with one
// invocation, busy − tenants ≤ perTenant − 1 at all times (an invocation
// beyond a tenant's first starts only while busy < perTenant; a first
// leaves busy − tenants as it was). Every worker is busy only when at least
// workers − perTenant + 1 tenants hold one. That is the bound: a tenant with
// nothing running starts at once (within the time to start a worker
// process) unless that many other tenants are running code; with the
// defaults (16 workers, 8 per tenant), unless 9 or more are.
//
// When a worker frees, the waiting invocation that may take it and whose
// tenant has the fewest invocations running goes first (the oldest among
// equals), so a tenant that runs little is served before one that runs
// much, whatever the order of arrival.
type admission struct {
	workers, perTenant, reserve int

	mu      sync.Mutex
	busy    int            // workers granted and not released
	running map[string]int // tenant → invocations holding a worker
	queue   []*waiter      // oldest first
	closed  bool
}

// waiter is an invocation waiting for a worker. ready is closed when it is
// granted one (granted) or the admission closes.
type waiter struct {
	tenant  string
	ready   chan struct{}
	granted bool
}

func newAdmission(workers, perTenant int) *admission {
	return &admission{workers: workers, perTenant: perTenant, reserve: workers - perTenant, running: map[string]int{}}
}

// may reports whether tenant may take a worker now. Callers hold mu.
func (a *admission) may(tenant string) bool {
	r := a.running[tenant]
	free := a.workers - a.busy
	return r < a.perTenant && free > 0 && (r == 0 || free > a.reserve)
}

// grant gives w a worker. Callers hold mu.
func (a *admission) grant(w *waiter) {
	a.running[w.tenant]++
	a.busy++
	w.granted = true
	close(w.ready)
}

// dispatch grants free workers to waiters, fewest running first, then
// oldest. Callers hold mu.
func (a *admission) dispatch() {
	for a.busy < a.workers && len(a.queue) > 0 {
		best := -1
		for i, w := range a.queue {
			if !a.may(w.tenant) {
				continue
			}
			if best < 0 || a.running[w.tenant] < a.running[a.queue[best].tenant] {
				best = i
			}
		}
		if best < 0 {
			return
		}
		w := a.queue[best]
		a.queue = append(a.queue[:best], a.queue[best+1:]...)
		a.grant(w)
	}
}

// admit waits, until deadline or ctx ends, for a worker for tenant. The
// release function gives it back. Errors: ErrBusy (no worker in time),
// ErrClosed.
func (a *admission) admit(ctx context.Context, tenant string, deadline time.Time) (release func(), err error) {
	w := &waiter{tenant: tenant, ready: make(chan struct{})}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil, ErrClosed
	}
	a.queue = append(a.queue, w)
	a.dispatch()
	a.mu.Unlock()

	release = func() { a.release(tenant) }
	select {
	case <-w.ready:
	default:
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		select {
		case <-w.ready:
		case <-timer.C:
		case <-ctx.Done():
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case w.granted:
		return release, nil
	case a.closed:
		return nil, ErrClosed
	}
	for i, q := range a.queue {
		if q == w {
			a.queue = append(a.queue[:i], a.queue[i+1:]...)
			break
		}
	}
	return nil, ErrBusy
}

// release gives back a worker of tenant and hands free workers on.
func (a *admission) release(tenant string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.running[tenant]--; a.running[tenant] <= 0 {
		delete(a.running, tenant)
	}
	a.busy--
	a.dispatch()
}

// inUse returns the workers granted and not released.
func (a *admission) inUse() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.busy
}

// close refuses later invocations and wakes the waiting ones, which fail
// with ErrClosed; invocations holding a worker release it as usual.
func (a *admission) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	for _, w := range a.queue {
		close(w.ready)
	}
	a.queue = nil
}
