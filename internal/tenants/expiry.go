package tenants

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ExpiryKind is the sweeper's handler of the invitations' schedule
// entries: an expired invitation is kept, marked EXPIRED (so that
// accepting it says it expired), with the event of a deleted one.
var ExpiryKind = unit.ExpiryKind{Kind: unit.EntityTenantInvitation, Swept: "invitation", Expire: expireInvitation}

// expireInvitation marks tenant tid's invitation id EXPIRED if it has
// expired and is not marked yet, and reports whether it did.
func expireInvitation(t *unit.Tx, tid, id string) (bool, error) {
	k := barrier.Tenant(tid).Record(unit.EntityTenantInvitation, id)
	var rec InvitationRecord
	ok, err := t.GetRecord(k, &rec)
	if err != nil || !ok || !rec.Expired(t.Now) || rec.Status == InvitationExpired {
		return false, err
	}
	rec.Status = InvitationExpired
	if err := t.PutRecord(k, &rec); err != nil {
		return false, err
	}
	if err := EmitInvitation(t, events.TenantInvitationDeleted, unit.SystemActor, &rec); err != nil {
		return false, err
	}
	return true, t.Log(unit.SystemActor, tid, unit.EntityTenantInvitation, id, unit.OpUpdate, "Invitation expired")
}
