package vaulttest

import (
	"context"
	"sync"

	"github.com/tokenvault/tokenvault/store"
)

// watchedCall marks the context of a call whose write transactions a
// WatchStore records (Watched).
type watchedCall struct{}

// Watched returns ctx marked so that a WatchStore records the write
// transactions of the call made with it.
func Watched(ctx context.Context) context.Context {
	return context.WithValue(ctx, watchedCall{}, true)
}

// WatchStore wraps a store and records what the write transactions of
// watched calls (a context made by Watched) read: the key of every
// Get, and the prefix of every Scan and ScanReverse (a scan of an empty
// family reads no entry, yet on PostgreSQL it still locks the family).
// It passes the store's generation counter through (store.Generation);
// Wrap keeps its SingleProcess marker.
type WatchStore struct {
	store.Store
	mu      sync.Mutex
	updates int
	reads   []string
}

// watchSingle is a WatchStore of a store held by one process.
type watchSingle struct{ *WatchStore }

func (watchSingle) SingleProcess() {}

// Wrap returns w around s, as s would be seen: held by one process or
// not.
func (w *WatchStore) Wrap(s store.Store) store.Store {
	w.Store = s
	if _, ok := s.(store.SingleProcess); ok {
		return watchSingle{w}
	}
	return w
}

func (w *WatchStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	if ctx.Value(watchedCall{}) == nil {
		return w.Store.Update(ctx, fn)
	}
	return w.Store.Update(ctx, func(tx store.Tx) error {
		w.mu.Lock()
		w.updates++
		w.mu.Unlock()
		wt := &watchTx{Tx: tx, w: w}
		if g, ok := tx.(store.Generation); ok {
			return fn(&watchGenTx{watchTx: wt, g: g})
		}
		return fn(wt)
	})
}

// Take returns the write transactions run and their reads since the last
// call, and forgets them.
func (w *WatchStore) Take() (updates int, reads []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	updates, reads = w.updates, w.reads
	w.updates, w.reads = 0, nil
	return updates, reads
}

func (w *WatchStore) note(what string) {
	w.mu.Lock()
	w.reads = append(w.reads, what)
	w.mu.Unlock()
}

type watchTx struct {
	store.Tx
	w *WatchStore
}

func (t *watchTx) Get(key []byte) ([]byte, error) {
	t.w.note(string(key))
	return t.Tx.Get(key)
}

func (t *watchTx) Scan(prefix, after []byte, limit int, fn func(key, value []byte) error) error {
	t.w.note(string(prefix) + "*")
	return t.Tx.Scan(prefix, after, limit, fn)
}

func (t *watchTx) ScanReverse(prefix, before []byte, limit int, fn func(key, value []byte) error) error {
	t.w.note(string(prefix) + "*")
	return t.Tx.ScanReverse(prefix, before, limit, fn)
}

// watchGenTx is a watchTx of a store that keeps a generation counter.
type watchGenTx struct {
	*watchTx
	g store.Generation
}

func (t *watchGenTx) Generation() (uint64, bool, error) { return t.g.Generation() }
func (t *watchGenTx) AdvanceGeneration() error          { return t.g.AdvanceGeneration() }
