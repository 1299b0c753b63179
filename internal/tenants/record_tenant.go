package tenants

import (
	"encoding/binary"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a tenant (Record), at tenant/<tid>/tenant/<tid>.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01           format version
//	uvarint flags  1 modified_at
//	str   name
//	str   owner_id
//	time  created_at
//	str   created_by
//	time  modified_at  (flag 1)
//	str   modified_by
//
// The id is the store key's. Version 0 is the JSON of the API's Tenant the
// Vault stored before (RecordV0); it still reads, and a tenant in it
// is written in version 1 on its next write and by the re-seal pass.
const Format = 1

const tenantModified = 1

// Record is a tenant as stored.
type Record struct {
	ID         string
	Name       string
	OwnerID    string
	CreatedBy  string
	CreatedAt  time.Time
	ModifiedBy string
	ModifiedAt *time.Time
}

func (r *Record) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if err := unit.BelongsAt(key, unit.EntityTenant, r.ID, r.ID); err != nil {
		return b, err
	}
	if err := unit.CheckRecordTimes("tenant", &r.CreatedAt, r.ModifiedAt); err != nil {
		return b, err
	}
	var flags uint64
	if r.ModifiedAt != nil {
		flags |= tenantModified
	}
	b = binary.AppendUvarint(append(b, Format), flags)
	b = unit.AppendStr(unit.AppendStr(b, r.Name), r.OwnerID)
	b = unit.AppendStr(unit.AppendTime(b, r.CreatedAt), r.CreatedBy)
	if r.ModifiedAt != nil {
		b = unit.AppendTime(b, *r.ModifiedAt)
	}
	return unit.AppendStr(b, r.ModifiedBy), nil
}

func (r *Record) DecodeRecord(key barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v RecordV0
		if err := unit.DecodeJSONV0(b, &v, "tenant"); err != nil {
			return err
		}
		*r = Record{Name: v.Name, OwnerID: v.OwnerID, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt,
			ModifiedBy: v.ModifiedBy, ModifiedAt: v.ModifiedAt}
		r.ID = key.Tenant() // the key is what the seal authenticated
		return nil
	}
	d, err := unit.BinaryRecord(b, Format, "tenant")
	if err != nil {
		return err
	}
	*r = Record{ID: key.Tenant()}
	flags := d.Uvarint()
	r.Name, r.OwnerID = d.Str(), d.Str()
	r.CreatedAt, r.CreatedBy = d.Time(), d.Str()
	r.ModifiedAt = d.OptTime(flags, tenantModified)
	r.ModifiedBy = d.Str()
	d.CheckFlags(flags, tenantModified<<1)
	if err := d.End(); err != nil {
		*r = Record{}
		return err
	}
	return nil
}

// RecordV0 is the JSON of the API's Tenant as format version 0
// stored it: read, never written (testdata/records/tenant-v0.json).
type RecordV0 struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	OwnerID    string     `json:"owner_id"`
	CreatedBy  string     `json:"created_by,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	ModifiedBy string     `json:"modified_by,omitempty"`
	ModifiedAt *time.Time `json:"modified_at,omitempty"`
}
