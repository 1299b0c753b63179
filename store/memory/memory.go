// Package memory is an in-memory [store.Store] for tests and ephemeral use.
//
// Nothing survives Close or the process. Transactions are serialized by one
// sync.RWMutex: an Update holds the write lock for its whole duration, so it
// is trivially isolated and sees its own writes, and any number of Views may
// run concurrently with each other. Transactions must not be nested: calling
// View or Update from inside fn deadlocks.
package memory

import (
	"context"
	"slices"
	"sync"

	"github.com/tokenvault/tokenvault/store"
)

var (
	_ store.Store     = (*Store)(nil)
	_ store.PreCommit = (*tx)(nil)
)

// Store is an in-memory [store.Store]. The zero value is not usable; call
// [New].
type Store struct {
	// mu serializes writers against everything else. Update holds it for
	// writing for the whole transaction; View holds it for reading.
	mu     sync.RWMutex
	m      map[string][]byte // guarded by mu; values are never aliased by callers
	closed bool              // guarded by mu

	// keys is m's key set in ascending order, brought up to date lazily by
	// Scan. Keeping it up to date on every insert would cost O(n) per new
	// key; benchmarks insert hundreds of thousands of keys, so instead an
	// insert appends to added and a delete sets removed (O(1)), and Scan
	// sorts only what was added and merges it in (O(n), not O(n log n): a
	// Vault scans a few keys every quarter of a second while it is loaded,
	// logindex.go). dirty asks for a rebuild from m (after a rollback).
	//
	// A writer holding mu exclusively may touch these directly. Readers
	// hold mu only for reading, so several Views may want to bring keys up
	// to date at once: they must also hold idx.
	idx     sync.Mutex
	keys    []string
	added   []string
	removed bool
	dirty   bool
}

// New returns an empty store.
func New() *Store {
	return &Store{m: make(map[string][]byte)}
}

// View runs fn in a read-only transaction under the read lock.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return store.ErrClosed
	}
	// The lock may have taken a while.
	if err := ctx.Err(); err != nil {
		return err
	}
	t := &tx{s: s}
	defer t.finish()
	return fn(t)
}

// Update runs fn in a read-write transaction under the write lock. Writes go
// straight to the map, which gives read-your-writes for free; an undo log
// restores the previous state if fn fails, panics, or ctx is done when fn
// returns. The writes fn added parts to (store.PreCommit) are done when it
// has returned nil, in the same transaction: there is no group commit.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	t := &tx{s: s, writable: true}
	committed := false
	// A plain defer rather than recover-and-repanic: deferred calls run
	// while a panic unwinds, so the rollback happens before the lock is
	// released and the panic keeps its original stack trace.
	defer func() {
		t.finish()
		if !committed {
			t.rollback()
		}
	}()
	if err := fn(t); err != nil {
		return err
	}
	if err := t.pre.Write(t); err != nil {
		return err
	}
	// Checked after fn so that a cancellation during fn is honored: this
	// is the commit point.
	if err := ctx.Err(); err != nil {
		return err
	}
	committed = true
	return nil
}

// Close waits for transactions in progress, then drops the data. Later View
// and Update calls return [store.ErrClosed]. Closing twice is not an error.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.m = nil
	s.keys, s.added = nil, nil
	return nil
}

// sortedKeys returns the current key set in ascending order. The caller must
// hold mu (for reading or writing). The returned slice is never modified
// afterwards, only replaced, so it stays valid while the caller iterates even
// if the index is rebuilt meanwhile.
func (s *Store) sortedKeys() []string {
	s.idx.Lock()
	defer s.idx.Unlock()
	switch {
	case s.dirty || s.keys == nil:
		keys := make([]string, 0, len(s.m))
		for k := range s.m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		s.keys = keys
	case len(s.added) > 0 || s.removed:
		s.keys = s.merged()
	}
	s.added, s.removed, s.dirty = nil, false, false
	return s.keys
}

// merged returns keys with the deleted keys left out and the added ones
// merged in, each once, as a new slice.
func (s *Store) merged() []string {
	present := func(k string) bool { _, ok := s.m[k]; return ok }
	added := slices.DeleteFunc(s.added, func(k string) bool { return !present(k) })
	slices.Sort(added)
	added = slices.Compact(added)
	out := make([]string, 0, len(s.keys)+len(added))
	i := 0
	for _, k := range s.keys {
		if s.removed && !present(k) {
			continue
		}
		for i < len(added) && added[i] < k {
			out = append(out, added[i])
			i++
		}
		if i < len(added) && added[i] == k {
			i++ // deleted and added again: listed once
		}
		out = append(out, k)
	}
	return append(out, added[i:]...)
}

// SingleProcess marks the store as held by one process.
func (s *Store) SingleProcess() {}
