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
//	uvarint flags  1 modified_at, 2 purposes
//	str   name
//	str   owner_id
//	time  created_at
//	str   created_by
//	time  modified_at  (flag 1)
//	str   modified_by
//	uvarint n, n (str name, str description)  purposes  (flag 2)
//
// Flag 2 (the tenant's purposes of access, purposes.go) was added within
// version 1: set only when the tenant has purposes, so every tenant
// without is byte for byte as it was.
//
// The id is the store key's. Version 0 is the JSON of the API's Tenant the
// Vault stored before (RecordV0); it still reads, and a tenant in it
// is written in version 1 on its next write and by the re-seal pass.
const Format = 1

const (
	tenantModified = 1 << iota
	tenantPurposes
)

// Record is a tenant as stored.
type Record struct {
	ID         string
	Name       string
	OwnerID    string
	CreatedBy  string
	CreatedAt  time.Time
	ModifiedBy string
	ModifiedAt *time.Time
	// Purposes are the purposes its data may be accessed for (nil:
	// none), in the order they were set.
	Purposes []Purpose
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
	if len(r.Purposes) > 0 {
		flags |= tenantPurposes
	}
	b = binary.AppendUvarint(append(b, Format), flags)
	b = unit.AppendStr(unit.AppendStr(b, r.Name), r.OwnerID)
	b = unit.AppendStr(unit.AppendTime(b, r.CreatedAt), r.CreatedBy)
	if r.ModifiedAt != nil {
		b = unit.AppendTime(b, *r.ModifiedAt)
	}
	b = unit.AppendStr(b, r.ModifiedBy)
	if flags&tenantPurposes != 0 {
		b = binary.AppendUvarint(b, uint64(len(r.Purposes)))
		for _, p := range r.Purposes {
			b = unit.AppendStr(unit.AppendStr(b, p.Name), p.Description)
		}
	}
	return b, nil
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
	if flags&tenantPurposes != 0 {
		n := d.Count()
		if n == 0 {
			d.Fail("empty purposes")
		}
		r.Purposes = make([]Purpose, 0, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			r.Purposes = append(r.Purposes, Purpose{Name: d.Str(), Description: d.Str()})
		}
	}
	d.CheckFlags(flags, tenantPurposes<<1)
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
