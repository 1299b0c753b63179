package counts

import (
	"context"
	"log/slog"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// The count folder. A commit writes its count changes as delta rows, one
// per count per store transaction, that only its instance writes
// (internal/barrier's "Kept counts"); reading a count sums its base row
// and its delta rows. The folder keeps those sums short, beside the
// commits: it folds this instance's rows of a count once there are 64 of
// them (barrier.FoldWake). The Vault's Open first folds what a Vault
// before it left (FoldLeft); on a shared store, where other instances
// come and go, the folder also looks every StaleInterval for rows that
// one left (older than barrier.StaleAfter). Nothing else runs on a timer,
// so a store one process holds changes only after writes.

// StaleInterval is how often, on a shared store, the folder looks for
// rows that another instance left (barrier.FoldStale).
const StaleInterval = time.Minute

// Run is the folder's loop over b's kept counts, until ctx ends. It logs
// the store's errors to logger and goes on.
func Run(ctx context.Context, b *barrier.Barrier, logger *slog.Logger) {
	var stale <-chan time.Time
	if !b.SingleProcess() {
		tick := time.NewTicker(StaleInterval)
		defer tick.Stop()
		stale = tick.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.FoldWake():
			if _, err := b.FoldOwn(ctx); err != nil && ctx.Err() == nil {
				logger.Error("tokenvault: folding counts failed", "err", err)
			}
		case <-stale:
			if _, err := b.FoldStale(ctx); err != nil && ctx.Err() == nil {
				logger.Error("tokenvault: folding counts left by other instances failed", "err", err)
			}
		}
	}
}

// FoldLeft folds, at Open, the delta rows that Vaults before this one
// left: on a store one process holds, all of them (their writer is gone);
// on a shared store, those older than barrier.StaleAfter. It returns the
// store's errors.
func FoldLeft(ctx context.Context, b *barrier.Barrier) error {
	_, err := b.FoldStale(ctx)
	return err
}

// FoldAll does the folder's work at once, for tests (which then need no
// timers): this instance's rows, then every row any instance may fold. It
// returns how many counts it changed, and the store's errors.
func FoldAll(ctx context.Context, b *barrier.Barrier) (int, error) {
	n, err := b.FoldOwn(ctx)
	if err != nil {
		return n, err
	}
	m, err := b.FoldStale(ctx)
	return n + m, err
}
