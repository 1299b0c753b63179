package sessions

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ExpiryKind is the sweeper's handler of the sessions' schedule entries:
// an expired session is deleted as Delete deletes it, by the system.
var ExpiryKind = unit.ExpiryKind{Kind: unit.EntitySession, Swept: "session", Expire: expire}

// expire deletes tenant tid's session id if it has expired, and reports
// whether it did.
func expire(t *unit.Tx, tid, id string) (bool, error) {
	var rec Record
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntitySession, id), &rec)
	if err != nil || !ok || !rec.Expired(t.Now) {
		return false, err
	}
	return true, Delete(t, unit.SystemActor, &rec, "Session expired")
}
