package unit

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// Work runs the units of work of one Vault on its barrier: read-only
// (View), read-write (Update), and optimistic (UpdateOptimistic, which
// runs the function first beside the store's single writer). Features
// hook onto every commit with Hook; Work calls none of them by name.
type Work struct {
	barrier *barrier.Barrier
	opts    Options
	hooks   []Hooks
	lines   LineWriter
	events  EventWriter
	// retries counts optimistic first runs that could not be applied.
	retries atomic.Int64
}

// Options are what Work needs of the Vault that owns it.
type Options struct {
	// Now is the Vault's clock.
	Now func() time.Time
	// Optimistic says whether UpdateOptimistic runs its function outside
	// the store's single writer first: true for stores one process holds,
	// whose read transactions cost no round trip.
	Optimistic bool
	// Generation reads the identity generation: a counter that moves when
	// a committed write changes what a key authenticates as (the auth
	// cache's). A Tx carries the value read before it began (Tx.AuthGen),
	// and an optimistic first run is applied only if it has not moved.
	Generation func() uint64
	// IdentitiesChanged is called when a transaction that wrote something a
	// key authenticates as has ended (committed or not: a backend may fail
	// after writing), before its caller hears of it; and when an
	// optimistic first run that did so fails.
	IdentitiesChanged func()
	// Result maps a transaction's error to what the call returns (nil
	// stays nil).
	Result func(error) error
}

// Hooks are what one feature hooks onto every unit of work. Nil members
// are skipped.
type Hooks struct {
	// BeforeCommit adds to a write transaction what its commit writes
	// besides what its function wrote (kept counts, the identity
	// generation's advance). It runs inside the store transaction, after
	// the function succeeded, on every run that commits.
	BeforeCommit func(*Tx) error
	// Appended is told that a unit's writes were appended to the store's
	// append log without a write transaction (barrier.Tx.TryAppend).
	Appended func()
	// Ended is told, under the call's context, that a unit of work (a
	// View, an Update or an UpdateOptimistic) ended with err, which is
	// what the call returns (Options.Result applied), after the unit's
	// transaction has ended: what it does is in a transaction of its
	// own. It is called only for a non-nil err.
	Ended func(ctx context.Context, err error)
}

// NewWork returns the Work of a Vault whose barrier is b.
func NewWork(b *barrier.Barrier, opts Options) *Work {
	return &Work{barrier: b, opts: opts}
}

// Hook registers h on every unit of work from now on. Call it while the
// Vault opens, before any unit of work runs.
func (w *Work) Hook(h Hooks) { w.hooks = append(w.hooks, h) }

// Barrier is the barrier the units of work run on.
func (w *Work) Barrier() *barrier.Barrier { return w.barrier }

// OptimisticRetries is how many optimistic first runs could not be
// applied and ran again in the write transaction.
func (w *Work) OptimisticRetries() int64 { return w.retries.Load() }

// newTx is the Tx of barrier transaction tx, for a call under ctx whose
// identity generation was gen when it began.
func (w *Work) newTx(ctx context.Context, tx *barrier.Tx, gen uint64) *Tx {
	t := &Tx{Tx: tx, Now: w.opts.Now().UTC(), Ctx: ctx, AuthGen: gen, work: w}
	tx.OnAuthChange(func() {
		// Void the cache before the caller hears of the change; on a
		// failed commit too, since a backend may fail after writing.
		// Then wait for the appends that checked the generation before
		// (barrier.Barrier.AppendsSettled).
		t.OnFinish(func(bool) {
			w.opts.IdentitiesChanged()
			w.barrier.AppendsSettled()
		})
	})
	return t
}

// View runs fn in a read-only store transaction.
func (w *Work) View(ctx context.Context, fn func(*Tx) error) error {
	ctx = WithCall(ctx)
	gen := w.opts.Generation()
	err := w.barrier.View(ctx, func(tx *barrier.Tx) error {
		return fn(w.newTx(ctx, tx, gen))
	})
	return w.end(ctx, err)
}

// Update runs fn in a read-write store transaction: everything fn writes,
// audit log lines included, lands together or not at all. fn may run
// more than once (a group commit runs it again when another call of its
// batch failed); the hooks of its last run run when it ends.
func (w *Work) Update(ctx context.Context, fn func(*Tx) error) error {
	ctx = WithCall(ctx)
	var last *Tx
	gen := w.opts.Generation()
	err := w.barrier.Update(ctx, func(tx *barrier.Tx) error {
		last = w.newTx(ctx, tx, gen)
		if err := fn(last); err != nil {
			return err
		}
		return w.commit(last)
	})
	return w.finish(ctx, last, err)
}

// commit adds to t what its store commit writes besides what its
// function wrote: what the hooks add.
func (w *Work) commit(t *Tx) error {
	for _, h := range w.hooks {
		if h.BeforeCommit != nil {
			if err := h.BeforeCommit(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish ends a write transaction whose last run was last (nil if it
// never ran) and which ended with err: it runs the hooks last's features
// registered, told whether it committed.
func (w *Work) finish(ctx context.Context, last *Tx, err error) error {
	if last != nil {
		last.finished(err == nil)
	}
	return w.end(ctx, err)
}

// end is what a unit of work under ctx that ended with err returns
// (Options.Result), told to the Ended hooks when it is an error.
func (w *Work) end(ctx context.Context, err error) error {
	err = w.opts.Result(err)
	if err != nil {
		for _, h := range w.hooks {
			if h.Ended != nil {
				h.Ended(ctx, err)
			}
		}
	}
	return err
}
