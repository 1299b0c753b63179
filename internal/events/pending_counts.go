package events

import (
	"sync"
	"time"
)

// PendingRecount is how long an instance trusts its count of a webhook's
// pending deliveries before it counts the store's entries again; a
// request refused at a cap is told to retry after it.
const PendingRecount = time.Minute

// PendingCounts is an instance's counts of pending deliveries, by
// webhook: taken from the store's pending index now and then (Set), and
// changed in between by what this instance's commits queue and finish
// (Add). pending.go says when a count is taken and
// why no commit reads the index. Safe for concurrent use.
type PendingCounts struct {
	mu    sync.Mutex
	hooks map[Key]*hookPending
	// wanted are the webhooks whose count a commit found missing or
	// stale, for the dispatcher to count (recountPending).
	wanted map[Key]bool
}

type hookPending struct {
	n       int       // pending deliveries, as of counted plus changes since
	counted time.Time // when the store's entries were last counted
	dropped int       // events dropped since the last log line
	logged  time.Time // when a drop was last logged
}

// Get returns webhook k's count and when it was counted (ok false when
// this instance has none).
func (c *PendingCounts) Get(k Key) (n int, counted time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hooks[k]
	if h == nil {
		return 0, time.Time{}, false
	}
	return h.n, h.counted, true
}

// Set records n, counted at at, as webhook k's count.
func (c *PendingCounts) Set(k Key, n int, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hooks == nil {
		c.hooks = map[Key]*hookPending{}
	}
	h := c.hooks[k]
	if h == nil {
		h = &hookPending{}
		c.hooks[k] = h
	}
	h.n, h.counted = n, at
}

// Add changes webhook k's count by d (never below zero: a delivery
// queued before this instance counted may finish here).
func (c *PendingCounts) Add(k Key, d int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.hooks[k]; h != nil {
		h.n = max(0, h.n+d)
	}
}

// Drop counts n events dropped for webhook k at now, and reports how many
// to log now (0: logged less than PendingRecount ago).
func (c *PendingCounts) Drop(k Key, n int, now time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hooks[k]
	if h == nil {
		return n
	}
	h.dropped += n
	if !h.logged.IsZero() && now.Sub(h.logged) < PendingRecount {
		return 0
	}
	out := h.dropped
	h.dropped, h.logged = 0, now
	return out
}

// Forget drops webhook k's count (the webhook is deleted).
func (c *PendingCounts) Forget(k Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.hooks, k)
}

// Total is the pending deliveries of every webhook this instance counts.
func (c *PendingCounts) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, h := range c.hooks {
		n += h.n
	}
	return n
}

// Want notes that webhook k's count is to be taken, and reports whether
// it was not noted already.
func (c *PendingCounts) Want(k Key) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wanted[k] {
		return false
	}
	if c.wanted == nil {
		c.wanted = map[Key]bool{}
	}
	c.wanted[k] = true
	return true
}

// TakeWanted returns the webhooks Want noted since the last call.
func (c *PendingCounts) TakeWanted() []Key {
	c.mu.Lock()
	defer c.mu.Unlock()
	return takeKeys(c.wanted)
}
