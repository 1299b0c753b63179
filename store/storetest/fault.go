package storetest

import (
	"context"
	"errors"
	"sync"

	"github.com/tokenvault/tokenvault/store"
)

// ErrInjected is the error a [FaultStore] returns for a write it was told to
// fail.
var ErrInjected = errors.New("storetest: injected write failure")

// A FaultStore wraps a Store and, once armed with FailAfter, fails writes: it
// is how tests above the Store prove that a failed write leaves nothing
// behind. While unarmed it is transparent.
//
// When a write fails inside an Update, the whole Update fails with
// ErrInjected (or the error given to FailWith) and is rolled back, even if
// the fn ignored the write's error: that models a backend whose commit
// fails.
type FaultStore struct {
	store.Store

	mu        sync.Mutex
	remaining int   // writes left before failing; negative means unarmed
	err       error // what a failed write returns; nil means ErrInjected
}

// NewFaultStore wraps s, unarmed.
func NewFaultStore(s store.Store) *FaultStore {
	return &FaultStore{Store: s, remaining: -1}
}

// FailAfter lets n more writes (Puts and Deletes) succeed and fails every
// write after them, until FailAfter is called again. A negative n disarms the
// store.
func (f *FaultStore) FailAfter(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.remaining = n
}

// FailWith makes failed writes, and the Updates they fail, return err
// instead of ErrInjected (nil restores ErrInjected): for example
// syscall.ENOSPC, to show what the layers above make of a full disk.
func (f *FaultStore) FailWith(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// failure is the error a failed write returns.
func (f *FaultStore) failure() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	return ErrInjected
}

// write reports whether the next write may go ahead, counting it.
func (f *FaultStore) write() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.remaining < 0:
		return true
	case f.remaining == 0:
		return false
	default:
		f.remaining--
		return true
	}
}

// Update runs fn against a transaction whose writes may fail.
func (f *FaultStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	return f.Store.Update(ctx, func(tx store.Tx) error {
		ft := &faultTx{Tx: tx, f: f}
		err := fn(ft)
		if ft.failed {
			return f.failure()
		}
		return err
	})
}

// View passes through: reads never fail.
func (f *FaultStore) View(ctx context.Context, fn func(store.Tx) error) error {
	return f.Store.View(ctx, fn)
}

type faultTx struct {
	store.Tx
	f      *FaultStore
	failed bool
}

func (t *faultTx) Put(key, value []byte) error {
	if !t.f.write() {
		t.failed = true
		return t.f.failure()
	}
	return t.Tx.Put(key, value)
}

func (t *faultTx) Delete(key []byte) error {
	if !t.f.write() {
		t.failed = true
		return t.f.failure()
	}
	return t.Tx.Delete(key)
}
