package access

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ExpiryKind is the sweeper's handler of the applications' schedule
// entries: an application past its expires_at is deleted by del, the
// deletion of an application (its record, its key's lookup, its schedule
// entry, its event and audit line), by the system. The deletion is
// passed in because it is still the Vault's (it emits the application's
// event, which this package does not).
func ExpiryKind(del func(t *unit.Tx, by unit.Actor, rec *ApplicationRecord, msg string) error) unit.ExpiryKind {
	return unit.ExpiryKind{Kind: unit.EntityApplication, Swept: "application", Expire: func(t *unit.Tx, tid, id string) (bool, error) {
		var rec ApplicationRecord
		ok, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntityApplication, id), &rec)
		if err != nil || !ok || !rec.Expired(t.Now) {
			return false, err
		}
		return true, del(t, unit.SystemActor, &rec, "Application expired")
	}}
}
