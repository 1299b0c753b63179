package tokenvault

import (
	"context"
	"time"
)

// The count folder. A commit writes its count changes as delta rows, one
// per count per store transaction, that only its instance writes
// (internal/barrier's "Kept counts"); reading a count sums its base row
// and its delta rows. The folder keeps those sums short, beside the
// commits: it folds this instance's rows every countFoldInterval, or at
// once when a count has gathered 64 of them (barrier.FoldWake), and every
// countStaleInterval (and once at Open) looks for rows that a Vault gone
// before left behind. It runs under v.bg, so Close stops it.

// countFoldInterval is how often the folder folds this instance's rows.
const countFoldInterval = time.Second

// countStaleInterval is how often the folder looks for rows that another
// instance left (barrier.FoldStale): on a shared store, rows become
// foldable by anyone after barrier.StaleAfter.
const countStaleInterval = time.Minute

// runCountFolder is the folder's loop, until v.bg ends.
func (v *Vault) runCountFolder() {
	ctx := v.bg
	v.foldStaleCounts(ctx) // what a Vault before this one left
	tick := time.NewTicker(countFoldInterval)
	defer tick.Stop()
	stale := time.NewTicker(countStaleInterval)
	defer stale.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-v.barrier.FoldWake():
		case <-stale.C:
			v.foldStaleCounts(ctx)
			continue
		}
		if _, err := v.barrier.FoldOwn(ctx); err != nil && ctx.Err() == nil {
			v.logger.Error("tokenvault: folding counts failed", "err", err)
		}
	}
}

func (v *Vault) foldStaleCounts(ctx context.Context) {
	if _, err := v.barrier.FoldStale(ctx); err != nil && ctx.Err() == nil {
		v.logger.Error("tokenvault: folding counts left by other instances failed", "err", err)
	}
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
