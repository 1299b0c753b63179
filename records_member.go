package tokenvault

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// The stored form of a tenant member (memberRecord), at
// tenant/<tid>/tenant_member/<id>.
//
// Format version 1 (binary; see records.go):
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
// API's TenantMember the Vault stored before (memberRecordV0); it still
// reads, and the re-seal pass writes a member in it in version 1.
const memberFormat = 1

// memberRecord is a tenant member as stored.
type memberRecord struct {
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

func (r *memberRecord) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if err := belongsAt(key, EntityTenantMember, r.TenantID, r.ID); err != nil {
		return b, err
	}
	if err := checkRecordTimes("member", &r.CreatedAt); err != nil {
		return b, err
	}
	b = appendStr(append(b, memberFormat), r.Role)
	b = appendStr(appendStr(appendStr(b, r.UserID), r.Email), r.FirstName)
	b = appendStr(appendStr(b, r.LastName), r.Picture)
	return appendTime(b, r.CreatedAt), nil
}

func (r *memberRecord) DecodeRecord(key barrier.Key, b []byte) error {
	if isJSONV0(b) {
		var v memberRecordV0
		if err := decodeJSONV0(b, &v, "member"); err != nil {
			return err
		}
		*r = memberRecord{Role: v.Role, UserID: v.User.ID, Email: v.User.Email, FirstName: v.User.FirstName,
			LastName: v.User.LastName, Picture: v.User.Picture, CreatedAt: v.CreatedAt}
		r.TenantID, r.ID = key.Tenant(), keyID(key.String())
		return nil
	}
	d, err := binaryRecord(b, memberFormat, "member")
	if err != nil {
		return err
	}
	*r = memberRecord{ID: keyID(key.String()), TenantID: key.Tenant()}
	r.Role, r.UserID, r.Email = d.str(), d.str(), d.str()
	r.FirstName, r.LastName, r.Picture = d.str(), d.str(), d.str()
	r.CreatedAt = d.time()
	if err := d.end(); err != nil {
		*r = memberRecord{}
		return err
	}
	return nil
}

// memberRecordV0 is the JSON of the API's TenantMember as format version 0
// stored it: read, never written (testdata/records/member-v0.json).
type memberRecordV0 struct {
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
