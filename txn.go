package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The unit of work is internal/unit: the transaction (unit.Tx, over the
// barrier's), its hooks and locals, and the runs (view, update,
// optimistic). A txn is a unit.Tx seen by the features still in this
// package, which reach the Vault's state through it; the features in
// packages of their own take the unit.Tx alone.

// txn is one store transaction seen through the Vault.
type txn struct {
	*unit.Tx
	v *Vault
}

// view runs fn in a read-only store transaction.
func (v *Vault) view(ctx context.Context, fn func(*txn) error) error {
	return v.work.View(ctx, func(t *unit.Tx) error { return fn(&txn{Tx: t, v: v}) })
}

// update runs fn in a read-write store transaction: everything fn writes,
// audit log lines included, lands together or not at all.
func (v *Vault) update(ctx context.Context, fn func(*txn) error) error {
	return v.work.Update(ctx, func(t *unit.Tx) error { return fn(&txn{Tx: t, v: v}) })
}

// updateOptimistic is update, with the function run first outside the
// store's single writer (unit.Work.UpdateOptimistic). fn may run more
// than once; what its last run set is what the call returns.
func (v *Vault) updateOptimistic(ctx context.Context, fn func(*txn) error) error {
	return v.work.UpdateOptimistic(ctx, func(t *unit.Tx) error { return fn(&txn{Tx: t, v: v}) })
}

// txnLocal is a feature's state in one transaction, as unit.Local, for a
// feature of this package whose finish hook needs the Vault.
type txnLocal[T any] struct {
	local  unit.Local[T]
	finish func(t *txn, state *T, committed bool)
}

// of returns l's state in t, made (and its finish hook registered) on
// first use.
func (l *txnLocal[T]) of(t *txn) *T {
	if s, ok := l.local.Peek(t.Tx); ok {
		return s
	}
	s := l.local.Of(t.Tx)
	if l.finish != nil {
		t.OnFinish(func(committed bool) { l.finish(t, s, committed) })
	}
	return s
}

// hookUnitsOfWork hooks the features of this package onto every unit of
// work: what a commit writes besides its function's writes, and what an
// append without a write transaction tells.
func (v *Vault) hookUnitsOfWork() {
	// Kept counts: the transaction's deltas, as rows of this instance
	// (internal/tokens/listing; folded by internal/counts).
	v.work.Hook(unit.Hooks{BeforeCommit: func(t *unit.Tx) error { return t.FlushCounts() }})
	// The auth cache's generation (auth_cache.go).
	v.work.Hook(unit.Hooks{BeforeCommit: access.AdvanceGeneration})
	// Appended audit lines are chained later, by the linker (internal/auditlog).
	v.work.Hook(unit.Hooks{Appended: func() { v.linker.Appended() }})
	// A call refused for its key is logged after its unit (denied.go).
	v.work.Hook(unit.Hooks{Ended: v.denied})
}
