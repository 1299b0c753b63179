package unit

import (
	"context"
	"strings"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// Expiry kinds. An object that expires has an entry in the sweeper's
// schedule (barrier's Expiry keys: <nanos>/<tenant>/<kind>/<id>), written
// beside it by the feature that owns it. When the entry is due, the
// sweeper hands it to the handler of its kind, which each feature
// package exports (its ExpiryKind) and the Vault gathers at Open, like
// the record kinds: the sweeper names no feature.

// ExpiryKind is the sweeper's handler of the schedule entries of one
// kind.
type ExpiryKind struct {
	// Kind is the kind in the schedule entry (an Entity* name, or the
	// feature's own).
	Kind string
	// Swept is the name the Vault's metrics count the objects Expire
	// ends under (tokenvault.SweepKind).
	Swept string
	// Expire ends, in t, the life of tenant tid's object id whose entry
	// is due: it deletes the object (or marks it expired) as its feature
	// does, with the audit line and event that go with it. It reports
	// false when the object is gone or no longer expired (its expiry
	// moved), which leaves nothing to do; its errors fail the sweep's
	// transaction.
	Expire func(t *Tx, tid, id string) (bool, error)
}

// SweepExpired ends, in one unit of work, up to batch objects whose entry
// in the expiry schedule (barrier.ExpirySchedule) is due, each by the
// handler of its kind in kinds; an entry of a kind none handles is
// removed with nothing to do. swept, when not nil, is told of each object
// ended, in its transaction. It returns what SweepDue returns.
func (w *Work) SweepExpired(ctx context.Context, kinds map[string]ExpiryKind, batch int, swept func(t *Tx, k ExpiryKind)) (removed int, more bool, err error) {
	return w.SweepDue(ctx, barrier.ExpirySchedule, barrier.TimeKey, batch, func(t *Tx, rest string) (bool, error) {
		// rest is <nanos>/<tenant>/<kind>/<id>.
		parts := strings.SplitN(rest, "/", 4)
		if len(parts) != 4 {
			return false, nil
		}
		k, ok := kinds[parts[2]]
		if !ok {
			return false, nil
		}
		done, err := k.Expire(t, parts[1], parts[3])
		if done && swept != nil {
			swept(t, k)
		}
		return done, err
	})
}
