package tenants

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// CheckInvite refuses to invite email to tenant tid when the address is a
// member's, or has an invitation already (pending or expired: that one is
// to be resent): both are Conflict.
func CheckInvite(t *unit.Tx, tid, email string) error {
	if m, err := MemberWith(t, tid, "", email); err != nil || m != nil {
		if err == nil {
			err = unit.Errorf(unit.Conflict, "the address is already a member's")
		}
		return err
	}
	if i, err := InvitationFor(t, tid, email); err != nil || i != nil {
		if err == nil {
			err = unit.Errorf(unit.Conflict, "the address has an invitation already (%s); resend it instead", i.ID)
		}
		return err
	}
	return nil
}

// Named returns tenant tid's record for the e-mail of an invitation: an
// empty record (its id and name empty) when there is none.
func Named(t *unit.Tx, tid string) (*Record, error) {
	var rec Record
	if _, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntityTenant, tid), &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}
