package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Optimistic updates.
//
// A store commits write transactions one after another, so whatever a write
// transaction's function does is time every other writer waits for: on
// bbolt, deciding, encoding, sealing and putting one token held the single
// writer for about as long as the commit's fsync. An optimistic update runs
// the function first in a read-only transaction, which runs beside the
// writer and beside other readers, with its writes kept aside (barrier.ViewSnapshot)
// and every read remembered (barrier.ViewSnapshot). Then a short write transaction checks that
// every read would still answer the same and, if so, only puts what the
// function wrote; if anything changed in between, the function runs again
// inside the write transaction, as a plain update would. The result is the
// same as a plain update's: the write transaction's checks make the first
// run as if it had run inside it.
//
// A first run that ends in an error returns that error without writing:
// it was decided on a consistent snapshot taken after the call began, so
// the call is as if it ran at that instant.
//
// The auth cache is not in the store: a first run that authorized from it
// is only applied if no write voided the cache since the update began
// (authGen); otherwise the function runs again in the write transaction.
//
// updateOptimistic is for the frequent calls whose reads rarely race with
// writers (creating, reading and detokenizing tokens, which write only
// their own records and audit lines); a call that scans much or conflicts
// often would pay twice, and uses update.

// updateOptimistic is update, with the function run first outside the
// store's single writer (see above). fn may run more than once; what its
// last run set is what the call returns, and its last run's writes are
// what commits.
func (v *Vault) updateOptimistic(ctx context.Context, fn func(*txn) error) error {
	if !v.optimistic {
		return v.update(ctx, fn)
	}
	ctx = unit.WithCall(ctx)
	gen := v.auth.gen.Load()
	var first *txn
	_, err := v.barrier.ViewSnapshot(ctx, func(tx *barrier.Tx) error {
		first = v.newTxn(ctx, tx, gen)
		return fn(first)
	})
	if err != nil {
		if first != nil && first.AuthChanged() {
			v.auth.invalidate()
		}
		return v.result(err)
	}
	if first.TryAppend(ctx, func() bool { return v.auth.gen.Load() == gen }) {
		v.chainer.appended.Add(1) // its lines are chained later (chain.go)
		return v.finish(first, nil)
	}
	last := first
	ranAgain := false
	err = v.barrier.Update(ctx, func(tx *barrier.Tx) error {
		// The store may run this function more than once (a group
		// commit runs it again when another call of its batch failed).
		// Once fn ran again, the first run's writes are never applied:
		// fn's results (what its closure set) are the last run's, and
		// must be those of the run that commits. Applying the first
		// run's writes after a run that failed with Conflict stored a
		// token and answered nil for it.
		last = first
		if !ranAgain && v.auth.gen.Load() == gen {
			ok, err := first.Apply(tx)
			if err != nil {
				return err
			}
			if ok {
				// Counts are read and written here, in the commit,
				// never in the first run (tokens_lists.go).
				return first.commit()
			}
		}
		v.optimisticRetries.Add(1)
		ranAgain = true
		last = v.newTxn(ctx, tx, v.auth.gen.Load())
		if err := fn(last); err != nil {
			return err
		}
		return last.commit()
	})
	return v.finish(last, err)
}
