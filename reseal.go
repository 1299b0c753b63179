package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/reseal"
)

// Re-sealing after a data key rotation is internal/reseal's: Reseal runs
// its steps, and RotateDataKey schedules it (reseal.Schedule).

// Reseal seals again, with the tenant's active data key, every record of
// each tenant whose data key was rotated since its records were last
// re-sealed, and returns how many records it rewrote. The background
// sweeper calls it every Options.Retention.SweepInterval; hosts that disable the
// sweeper call it themselves. It needs no API key: it changes no data.
//
// Returns StorageFull or Internal, with the count of records rewritten
// before the failure; a later call goes on where it stopped.
func (v *Vault) Reseal(ctx context.Context) (int, error) {
	// Look first in a read transaction: most of the time nothing is
	// scheduled, and a write transaction would cost a commit.
	pending := false
	err := v.view(ctx, func(t *txn) error {
		var err error
		pending, err = reseal.Due(t.Tx)
		return err
	})
	if err != nil || !pending {
		return 0, err
	}
	total := 0
	for {
		n, more, err := v.resealOnce(ctx)
		total += n
		if err != nil || !more {
			return total, err
		}
	}
}

// resealOnce re-seals up to reseal.Batch entries of the first tenant
// scheduled, in one transaction.
func (v *Vault) resealOnce(ctx context.Context) (resealed int, more bool, err error) {
	// A line appended before a rotation, sealed with the older term, is
	// in the store before this pass looks.
	if err := v.foldAppends(ctx); err != nil {
		return 0, false, err
	}
	err = v.update(ctx, func(t *txn) error {
		resealed, more, err = reseal.Once(t.Tx, v.recordKinds, v.logger)
		return err
	})
	return resealed, more, err
}
