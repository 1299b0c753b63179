package tenants

import (
	"strings"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Members returns every member of tenant tid, oldest first. Tenants have
// few members, so a scan is the index.
func Members(t *unit.Tx, tid string) ([]MemberRecord, error) {
	raws, err := t.ScanValues(barrier.Tenant(tid).Records(unit.EntityTenantMember))
	if err != nil {
		return nil, err
	}
	out := make([]MemberRecord, 0, len(raws))
	for _, kv := range raws {
		var rec MemberRecord
		if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// MemberWith returns the member of tenant tid that is user uid or has this
// e-mail address (compared case-insensitively; either may be empty), or
// nil. Invitations and their acceptance use it to refuse an address or a
// user that is a member already.
func MemberWith(t *unit.Tx, tid, uid, email string) (*MemberRecord, error) {
	members, err := Members(t, tid)
	if err != nil {
		return nil, err
	}
	for i, m := range members {
		if (uid != "" && m.UserID == uid) || (email != "" && strings.EqualFold(m.Email, email)) {
			return &members[i], nil
		}
	}
	return nil, nil
}
