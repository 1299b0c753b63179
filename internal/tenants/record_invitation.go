package tenants

import (
	"encoding/binary"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of an invitation (InvitationRecord), at
// tenant/<tid>/tenant_invitation/<id>.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01           format version
//	uvarint flags  1 modified_at
//	str   email
//	str   status
//	time  expires_at
//	bytes token_hash   the keyed hash of the live link token (the token
//	                   is never stored)
//	time  created_at
//	str   created_by
//	time  modified_at  (flag 1)
//	str   modified_by
//
// The tenant and id are the store key's. Version 0 is the JSON of the
// API's Invitation with token_hash the Vault stored before
// (InvitationRecordV0); it still reads, and an invitation in it is written
// in version 1 on its next write and by the re-seal pass.
const InvitationFormat = 1

const invitationModified = 1

// InvitationRecord is an invitation as stored, with the keyed hash of its
// live link token.
type InvitationRecord struct {
	ID         string
	TenantID   string
	Email      string
	Status     string
	ExpiresAt  time.Time
	CreatedBy  string
	CreatedAt  time.Time
	ModifiedBy string
	ModifiedAt *time.Time
	TokenHash  []byte
}

// Expired reports whether the invitation has expired at now.
func (r *InvitationRecord) Expired(now time.Time) bool { return !now.Before(r.ExpiresAt) }

func (r *InvitationRecord) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if err := unit.BelongsAt(key, unit.EntityTenantInvitation, r.TenantID, r.ID); err != nil {
		return b, err
	}
	if err := unit.CheckRecordTimes("invitation", &r.ExpiresAt, &r.CreatedAt, r.ModifiedAt); err != nil {
		return b, err
	}
	var flags uint64
	if r.ModifiedAt != nil {
		flags |= invitationModified
	}
	b = binary.AppendUvarint(append(b, InvitationFormat), flags)
	b = unit.AppendStr(unit.AppendStr(b, r.Email), r.Status)
	b = unit.AppendBytes(unit.AppendTime(b, r.ExpiresAt), r.TokenHash)
	b = unit.AppendStr(unit.AppendTime(b, r.CreatedAt), r.CreatedBy)
	if r.ModifiedAt != nil {
		b = unit.AppendTime(b, *r.ModifiedAt)
	}
	return unit.AppendStr(b, r.ModifiedBy), nil
}

func (r *InvitationRecord) DecodeRecord(key barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v InvitationRecordV0
		if err := unit.DecodeJSONV0(b, &v, "invitation"); err != nil {
			return err
		}
		*r = InvitationRecord{Email: v.Email, Status: v.Status, ExpiresAt: v.ExpiresAt, CreatedBy: v.CreatedBy,
			CreatedAt: v.CreatedAt, ModifiedBy: v.ModifiedBy, ModifiedAt: v.ModifiedAt, TokenHash: v.TokenHash}
		if len(r.TokenHash) == 0 {
			r.TokenHash = nil
		}
		r.TenantID, r.ID = key.Tenant(), unit.KeyID(key.String())
		return nil
	}
	d, err := unit.BinaryRecord(b, InvitationFormat, "invitation")
	if err != nil {
		return err
	}
	*r = InvitationRecord{ID: unit.KeyID(key.String()), TenantID: key.Tenant()}
	flags := d.Uvarint()
	r.Email, r.Status = d.Str(), d.Str()
	r.ExpiresAt, r.TokenHash = d.Time(), d.Bytes()
	r.CreatedAt, r.CreatedBy = d.Time(), d.Str()
	r.ModifiedAt = d.OptTime(flags, invitationModified)
	r.ModifiedBy = d.Str()
	d.CheckFlags(flags, invitationModified<<1)
	if err := d.End(); err != nil {
		*r = InvitationRecord{}
		return err
	}
	return nil
}

// InvitationRecordV0 is the JSON of the API's Invitation and token_hash as
// format version 0 stored it: read, never written
// (testdata/records/invitation-v0.json).
type InvitationRecordV0 struct {
	ID         string     `json:"id"`
	TenantID   string     `json:"tenant_id"`
	Email      string     `json:"email"`
	Status     string     `json:"status"`
	ExpiresAt  time.Time  `json:"expires_at"`
	CreatedBy  string     `json:"created_by,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	ModifiedBy string     `json:"modified_by,omitempty"`
	ModifiedAt *time.Time `json:"modified_at,omitempty"`
	TokenHash  []byte     `json:"token_hash"`
}
