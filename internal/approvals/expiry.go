package approvals

import (
	"errors"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// A pending change has an entry in the sweeper's schedule at its expiry
// (ExpiryKey), removed when it is decided before: the sweeper records a
// change nobody decided as expired, with its audit line and event, so
// that the trail tells that the request lapsed.

// ExpiryKind is the sweeper's handler of the changes' schedule entries.
var ExpiryKind = unit.ExpiryKind{Kind: KindChange, Swept: "approval", Expire: expire}

// ExpiryKey is the schedule entry of change c.
func ExpiryKey(c *Change) barrier.Key {
	return barrier.Tenant(c.TenantID).Expiry(c.ExpiresAt, KindChange, c.ID)
}

// expire records tenant tid's change id as expired if it is pending past
// its expiry, and reports whether it did.
func expire(t *unit.Tx, tid, id string) (bool, error) {
	c, err := Get(t, tid, id)
	if errors.Is(err, unit.ErrNotFound) {
		return false, nil
	}
	if err != nil || !c.ExpiredAt(t.Now) {
		return false, err
	}
	return true, decide(t, unit.SystemActor, c, Expired, "the change expired before it was approved", Expired)
}
