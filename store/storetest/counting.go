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

// Reads returns how many reads the store has counted since it was made.
func (c *CountingStore) Reads() int64 { return c.reads.Load() }

// View counts the reads of fn's transaction.
func (c *CountingStore) View(ctx context.Context, fn func(store.Tx) error) error {
	return c.Store.View(ctx, func(tx store.Tx) error { return fn(&countingTx{Tx: tx, c: c}) })
}

// Update counts the reads of fn's transaction.
func (c *CountingStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	return c.Store.Update(ctx, func(tx store.Tx) error { return fn(&countingTx{Tx: tx, c: c}) })
}

type countingTx struct {
	store.Tx
	c *CountingStore
}

func (t *countingTx) Get(key []byte) ([]byte, error) {
	t.c.reads.Add(1)
	return t.Tx.Get(key)
}

func (t *countingTx) Scan(prefix, after []byte, limit int, fn func(key, value []byte) error) error {
	return t.Tx.Scan(prefix, after, limit, func(k, v []byte) error {
		t.c.reads.Add(1)
		return fn(k, v)
	})
}

func (t *countingTx) ScanReverse(prefix, before []byte, limit int, fn func(key, value []byte) error) error {
	return t.Tx.ScanReverse(prefix, before, limit, func(k, v []byte) error {
		t.c.reads.Add(1)
		return fn(k, v)
	})
}
