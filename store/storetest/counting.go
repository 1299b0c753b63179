package storetest

import (
	"context"
	"sync/atomic"

	"github.com/tokenvault/tokenvault/store"
)

// A CountingStore wraps a Store and counts what its transactions read:
// every Get, and every entry a Scan or ScanReverse hands to its callback.
// Tests above the Store use it to hold an operation to what it should
// cost (a list page reads about its size, not the tenant). It is
// otherwise transparent.
type CountingStore struct {
	store.Store
	reads atomic.Int64
}

// NewCountingStore wraps s.
func NewCountingStore(s store.Store) *CountingStore { return &CountingStore{Store: s} }

// Reads returns how many reads the store has counted since it was made,
// in every transaction: the Vault's background work (the audit chain's
// linker, the count folder) included.
func (c *CountingStore) Reads() int64 { return c.reads.Load() }

type counterKey struct{}

// Counted returns a context whose transactions a CountingStore also counts
// apart, and a function that returns how many reads they made. A test
// holds one call to its cost with it: the call's reads, not what the
// Vault's background work reads beside it at the same moment (which
// Reads counts, and which a loaded machine can move into any window).
func Counted(ctx context.Context) (context.Context, func() int64) {
	n := new(atomic.Int64)
	return context.WithValue(ctx, counterKey{}, n), n.Load
}

// View counts the reads of fn's transaction.
func (c *CountingStore) View(ctx context.Context, fn func(store.Tx) error) error {
	return c.Store.View(ctx, func(tx store.Tx) error { return fn(c.tx(ctx, tx)) })
}

// Update counts the reads of fn's transaction.
func (c *CountingStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	return c.Store.Update(ctx, func(tx store.Tx) error { return fn(c.tx(ctx, tx)) })
}

func (c *CountingStore) tx(ctx context.Context, tx store.Tx) *countingTx {
	call, _ := ctx.Value(counterKey{}).(*atomic.Int64)
	return &countingTx{Tx: tx, c: c, call: call}
}

type countingTx struct {
	store.Tx
	c    *CountingStore
	call *atomic.Int64 // the Counted context's counter, or nil
}

func (t *countingTx) read() {
	t.c.reads.Add(1)
	if t.call != nil {
		t.call.Add(1)
	}
}

func (t *countingTx) Get(key []byte) ([]byte, error) {
	t.read()
	return t.Tx.Get(key)
}

func (t *countingTx) Scan(prefix, after []byte, limit int, fn func(key, value []byte) error) error {
	return t.Tx.Scan(prefix, after, limit, func(k, v []byte) error {
		t.read()
		return fn(k, v)
	})
}

func (t *countingTx) ScanReverse(prefix, before []byte, limit int, fn func(key, value []byte) error) error {
	return t.Tx.ScanReverse(prefix, before, limit, func(k, v []byte) error {
		t.read()
		return fn(k, v)
	})
}
