package tenants

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a tenant member (MemberRecord), at
// tenant/<tid>/tenant_member/<id>.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01  format version
//	str   role
//	str   user id
//	str   user email
//	str   user first_name
//	str   user last_name
//	str   user picture
//	time  created_at
//
// The tenant and id are the store key's. Version 0 is the JSON of the
// API's TenantMember the Vault stored before (MemberRecordV0); it still
// reads, and the re-seal pass writes a member in it in version 1.
const MemberFormat = 1

// MemberRecord is a tenant member as stored.
type MemberRecord struct {
	ID        string
	TenantID  string
	Role      string
	UserID    string
	Email     string
	FirstName string
	LastName  string
	Picture   string
	CreatedAt time.Time
}

func (r *MemberRecord) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if err := unit.BelongsAt(key, unit.EntityTenantMember, r.TenantID, r.ID); err != nil {
		return b, err
	}
	if err := unit.CheckRecordTimes("member", &r.CreatedAt); err != nil {
		return b, err
	}
	b = unit.AppendStr(append(b, MemberFormat), r.Role)
	b = unit.AppendStr(unit.AppendStr(unit.AppendStr(b, r.UserID), r.Email), r.FirstName)
	b = unit.AppendStr(unit.AppendStr(b, r.LastName), r.Picture)
	return unit.AppendTime(b, r.CreatedAt), nil
}

func (r *MemberRecord) DecodeRecord(key barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v MemberRecordV0
		if err := unit.DecodeJSONV0(b, &v, "member"); err != nil {
			return err
		}
		*r = MemberRecord{Role: v.Role, UserID: v.User.ID, Email: v.User.Email, FirstName: v.User.FirstName,
			LastName: v.User.LastName, Picture: v.User.Picture, CreatedAt: v.CreatedAt}
		r.TenantID, r.ID = key.Tenant(), unit.KeyID(key.String())
		return nil
	}
	d, err := unit.BinaryRecord(b, MemberFormat, "member")
	if err != nil {
		return err
	}
	*r = MemberRecord{ID: unit.KeyID(key.String()), TenantID: key.Tenant()}
	r.Role, r.UserID, r.Email = d.Str(), d.Str(), d.Str()
	r.FirstName, r.LastName, r.Picture = d.Str(), d.Str(), d.Str()
	r.CreatedAt = d.Time()
	if err := d.End(); err != nil {
		*r = MemberRecord{}
		return err
	}
	return nil
}

// MemberRecordV0 is the JSON of the API's TenantMember as format version 0
// stored it: read, never written (testdata/records/member-v0.json).
type MemberRecordV0 struct {
	ID       string `json:"id"`
	TenantID string `json:"tenant_id"`
	Role     string `json:"role"`
	User     struct {
		ID        string `json:"id"`
		Email     string `json:"email,omitempty"`
		FirstName string `json:"first_name,omitempty"`
		LastName  string `json:"last_name,omitempty"`
		Picture   string `json:"picture,omitempty"`
	} `json:"user"`
	CreatedAt time.Time `json:"created_at"`
}
