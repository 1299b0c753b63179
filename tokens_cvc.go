package tokenvault

import (
	"context"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// DefaultCVCRetention is how long a card's cvc is kept when
// Options.Retention.CVC is zero.
const DefaultCVCRetention = time.Hour

// sweepCVCs removes from the stored records every cvc past its retention,
// in transactions of at most sweepBatch cards, and returns how many it
// removed. Sweep calls it.
func (v *Vault) sweepCVCs(ctx context.Context) (int, error) {
	total, err := v.scheduleLegacyCVCs(ctx)
	if err != nil {
		return total, err
	}
	for {
		n, more, err := v.sweepCVCsOnce(ctx)
		total += n
		if err != nil || !more {
			return total, err
		}
	}
}

// sweepCVCsOnce removes up to sweepBatch due cvcs in one transaction: each
// card record is written again without its cvc, its schedule entry
// deleted, and the removal logged, together or not at all.
func (v *Vault) sweepCVCsOnce(ctx context.Context) (removed int, more bool, err error) {
	through := func(now time.Time) string { return barrier.TimeKey(now.Add(-v.cvcRetention)) }
	return v.sweepDue(ctx, barrier.CVCSchedule, through, func(t *txn, rest string) (bool, error) {
		// rest is <nanos>/<tenant>/<id>.
		parts := strings.SplitN(rest, "/", 3)
		if len(parts) != 3 {
			return false, nil
		}
		done, err := v.tokens.RemoveCVC(t.Tx, parts[1], parts[2], parts[0])
		if done {
			t.sweptOne(SweptCVCs)
		}
		return done, err
	})
}

// scheduleLegacyCVCs gives every card stored before cvc retention existed
// (a cvc without CVCAt) its schedule: it visits every tenant's token
// records once, sweepBatch a transaction, removing the cvcs already due and
// recording when the others were written (tokens.CVCWrittenAt). Cards written
// since carry their schedule, so once the scan is done it is one read per
// sweep. It returns how many cvcs it removed.
func (v *Vault) scheduleLegacyCVCs(ctx context.Context) (int, error) {
	total := 0
	for {
		n, done, err := v.scheduleLegacyCVCsOnce(ctx)
		total += n
		if err != nil || done {
			return total, err
		}
	}
}

func (v *Vault) scheduleLegacyCVCsOnce(ctx context.Context) (removed int, done bool, err error) {
	err = v.update(ctx, func(t *txn) error {
		var err error
		removed, done, err = v.tokens.ScheduleLegacyCVCs(t.Tx, sweepBatch)
		return err
	})
	return removed, done, err
}
