package unit

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/barrier"
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
// the call is as if it ran at that instant. Its finish hooks run, told
// it did not commit, as a failed Update's do (a feature that reports a
// refusal, such as the circuit breaker on reveals, learns of it).
//
// The auth cache is not in the store: a first run that authorized from it
// is only applied if no write voided the cache since the update began
// (authGen); otherwise the function runs again in the write transaction.
//
// UpdateOptimistic is for the frequent calls whose reads rarely race with
// writers (creating, reading and detokenizing tokens, which write only
// their own records and audit lines); a call that scans much or conflicts
// often would pay twice, and uses Update.

// UpdateOptimistic is Update, with the function run first outside the
// store's single writer (see above). fn may run more than once; what its
// last run set is what the call returns, and its last run's writes are
// what commits.
func (w *Work) UpdateOptimistic(ctx context.Context, fn func(*Tx) error) error {
	if !w.opts.Optimistic {
		return w.Update(ctx, fn)
	}
	ctx = WithCall(ctx)
	gen := w.opts.Generation()
	var first *Tx
	_, err := w.barrier.ViewSnapshot(ctx, func(tx *barrier.Tx) error {
		first = w.newTx(ctx, tx, gen)
		return fn(first)
	})
	if err != nil {
		if first != nil && first.AuthChanged() {
			w.opts.IdentitiesChanged()
		}
		if first != nil {
			first.finished(false)
		}
		return w.end(ctx, err)
	}
	if first.TryAppend(ctx, func() bool { return w.opts.Generation() == gen }) {
		for _, h := range w.hooks {
			if h.Appended != nil {
				h.Appended()
			}
		}
		return w.finish(ctx, first, nil)
	}
	last := first
	ranAgain := false
	err = w.barrier.Update(ctx, func(tx *barrier.Tx) error {
		// The store may run this function more than once (a group
		// commit runs it again when another call of its batch failed).
		// Once fn ran again, the first run's writes are never applied:
		// fn's results (what its closure set) are the last run's, and
		// must be those of the run that commits. Applying the first
		// run's writes after a run that failed with Conflict stored a
		// token and answered nil for it.
		last = first
		if !ranAgain && w.opts.Generation() == gen {
			ok, err := first.Apply(tx)
			if err != nil {
				return err
			}
			if ok {
				// What the hooks add (counts) is read and written here,
				// in the commit, never in the first run.
				return w.commit(first)
			}
		}
		w.retries.Add(1)
		ranAgain = true
		last = w.newTx(ctx, tx, w.opts.Generation())
		if err := fn(last); err != nil {
			return err
		}
		return w.commit(last)
	})
	return w.finish(ctx, last, err)
}
