package store

import "sync"

// Gate is what a backend's Close needs: it refuses transactions once the
// store is closing and waits for those in progress. A counter under a
// mutex, rather than an RWMutex held across transactions, means a View
// nested inside an Update cannot deadlock against a pending Close; it is
// refused instead. The zero value is open.
type Gate struct {
	mu     sync.Mutex
	idle   *sync.Cond // signalled when active drops to zero
	closed bool
	active int
}

// Enter registers a transaction. It reports false once Close was called;
// a true Enter must be followed by Leave.
func (g *Gate) Enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.active++
	return true
}

// Leave ends a transaction registered by Enter.
func (g *Gate) Leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.active--
	if g.active == 0 && g.idle != nil {
		g.idle.Broadcast()
	}
}

// Close refuses new transactions and waits for those in progress. It
// reports false when the gate was closed already, so the backend releases
// its resources once.
func (g *Gate) Close() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.closed = true
	if g.idle == nil {
		g.idle = sync.NewCond(&g.mu)
	}
	for g.active > 0 {
		g.idle.Wait()
	}
	return true
}
