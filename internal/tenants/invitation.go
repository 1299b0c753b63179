package tenants

import (
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// An invitation's link carries a random token: whoever holds it can join
// the tenant until the invitation expires. The store keeps only its keyed
// hash (LinkHash), in the record and as the key of the link's lookup
// (sys/invite/<hash>, an access.KeyRef to the record), so neither a store
// dump nor a key listing reveals a working link.

// Invitation statuses: the values of InvitationRecord.Status.
const (
	InvitationPending = "PENDING"
	InvitationExpired = "EXPIRED"
)

// Lifetime is how long an invitation link works after creation, and how
// much each resend extends it.
const Lifetime = 72 * time.Hour

// TokenPrefix starts every invitation link token.
const TokenPrefix = "inv_"

// NewToken returns a new random link token.
func NewToken() string { return TokenPrefix + unit.NewAPIKey()[len(unit.APIKeyPrefix):] }

// LinkHash is the keyed hash under which the link token is stored, keyed
// by the system keys sys.
func LinkHash(sys *barrier.Keys, token string) []byte {
	return sys.MAC([]byte("invite\x00"), []byte(token))
}

// ResentExpiry is when a resent invitation that expired (or expires) at
// old expires: Lifetime after old, or after now if old has passed, so a
// resent invitation always has a full Lifetime at least.
func ResentExpiry(old, now time.Time) time.Time {
	if old.After(now) {
		return old.Add(Lifetime)
	}
	return now.Add(Lifetime)
}

// PutInvitation writes an invitation with its link lookup and expiry
// entry.
func PutInvitation(t *unit.Tx, rec *InvitationRecord) error {
	ref := access.KeyRef{TenantID: rec.TenantID, Kind: unit.EntityTenantInvitation, ID: rec.ID}
	if err := t.PutRecord(barrier.InviteLookup(rec.TokenHash), &ref); err != nil {
		return err
	}
	if err := t.PutIndex(barrier.Tenant(rec.TenantID).Expiry(rec.ExpiresAt, unit.EntityTenantInvitation, rec.ID)); err != nil {
		return err
	}
	return t.PutRecord(barrier.Tenant(rec.TenantID).Record(unit.EntityTenantInvitation, rec.ID), rec)
}

// DropLinks deletes the link lookup and expiry entry of rec, so its
// outstanding link stops working.
func DropLinks(t *unit.Tx, rec *InvitationRecord) error {
	for _, k := range []barrier.Key{
		barrier.InviteLookup(rec.TokenHash),
		barrier.Tenant(rec.TenantID).Expiry(rec.ExpiresAt, unit.EntityTenantInvitation, rec.ID),
	} {
		if err := t.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// Invitations returns every invitation of tenant tid, oldest first, as
// stored (the status is not brought up to date: see Expired).
func Invitations(t *unit.Tx, tid string) ([]InvitationRecord, error) {
	raws, err := t.ScanValues(barrier.Tenant(tid).Records(unit.EntityTenantInvitation))
	if err != nil {
		return nil, err
	}
	out := make([]InvitationRecord, 0, len(raws))
	for _, kv := range raws {
		var rec InvitationRecord
		if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// InvitationFor returns the invitation of tenant tid for email (compared
// case-insensitively), or nil.
func InvitationFor(t *unit.Tx, tid, email string) (*InvitationRecord, error) {
	all, err := Invitations(t, tid)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(all, func(r InvitationRecord) bool { return strings.EqualFold(r.Email, email) })
	if i < 0 {
		return nil, nil
	}
	return &all[i], nil
}

// MustInvitation loads invitation id of tenant tid. Returns NotFound
// ("invitation") for a malformed or unknown id.
func MustInvitation(t *unit.Tx, tid, id string) (*InvitationRecord, error) {
	if !unit.ValidID(id) {
		return nil, unit.NotFoundError("invitation")
	}
	var rec InvitationRecord
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntityTenantInvitation, id), &rec)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, unit.NotFoundError("invitation")
	}
	return &rec, nil
}
