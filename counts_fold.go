package tokenvault

import (
	"context"
	"time"
)

// The count folder. A commit writes its count changes as delta rows, one
// per count per store transaction, that only its instance writes
// (internal/barrier's "Kept counts"); reading a count sums its base row
// and its delta rows. The folder keeps those sums short, beside the
// commits: it folds this instance's rows of a count once there are 64 of
// them (barrier.FoldWake). Open first folds what a Vault before it left
// (foldLeftCounts); on a shared store, where other instances come and
// go, the folder also looks every countStaleInterval for rows that one
// left (older than barrier.StaleAfter). Nothing else runs on a timer, so
// a store one process holds changes only after writes. The folder runs
// under v.bg, so Close stops it.

// countStaleInterval is how often, on a shared store, the folder looks
// for rows that another instance left (barrier.FoldStale).
const countStaleInterval = time.Minute

// runCountFolder is the folder's loop, until v.bg ends.
func (v *Vault) runCountFolder() {
	ctx := v.bg
	var stale <-chan time.Time
	if !v.barrier.SingleProcess() {
		tick := time.NewTicker(countStaleInterval)
		defer tick.Stop()
		stale = tick.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-v.barrier.FoldWake():
			if _, err := v.barrier.FoldOwn(ctx); err != nil && ctx.Err() == nil {
				v.logger.Error("tokenvault: folding counts failed", "err", err)
			}
		case <-stale:
			if _, err := v.barrier.FoldStale(ctx); err != nil && ctx.Err() == nil {
				v.logger.Error("tokenvault: folding counts left by other instances failed", "err", err)
			}
		}
	}
}

// foldLeftCounts folds, at Open, the delta rows that Vaults before this
// one left: on a store one process holds, all of them (their writer is
// gone); on a shared store, those older than barrier.StaleAfter. It
// returns the store's errors.
func (v *Vault) foldLeftCounts(ctx context.Context) error {
	_, err := v.barrier.FoldStale(ctx)
	return err
}

// foldCounts does the folder's work at once, for tests (which then need
// no timers): this instance's rows, then every row any instance may fold.
// It returns how many counts it changed, and the store's errors.
func (v *Vault) foldCounts(ctx context.Context) (int, error) {
	n, err := v.barrier.FoldOwn(ctx)
	if err != nil {
		return n, err
	}
	m, err := v.barrier.FoldStale(ctx)
	return n + m, err
}
