package reactors

import (
	"encoding/binary"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a reactor (Record), at
// tenant/<tid>/reactor/<id>.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01           format version
//	uvarint flags  1 modified_at
//	str   name
//	str   formula_id      ("" for a reactor with code of its own)
//	str   code
//	json  configuration
//	str   application_id
//	time  created_at
//	str   created_by
//	time  modified_at     (flag 1)
//	str   modified_by
//
// The tenant and id are the store key's. Version 0 is the JSON written
// before (RecordV0); it still reads, and a reactor in it is
// written in version 1 on its next write and by the re-seal pass.
const Format = 1

const reactorModified = 1

// Record is a reactor as stored.
type Record struct {
	ID            string
	TenantID      string
	Name          string
	FormulaID     string
	Code          string
	Configuration map[string]any
	ApplicationID string
	CreatedBy     string
	CreatedAt     time.Time
	ModifiedBy    string
	ModifiedAt    *time.Time
}

func (r *Record) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if err := unit.BelongsAt(key, unit.EntityReactor, r.TenantID, r.ID); err != nil {
		return b, err
	}
	if err := unit.CheckRecordTimes("reactor", &r.CreatedAt, r.ModifiedAt); err != nil {
		return b, err
	}
	var flags uint64
	if r.ModifiedAt != nil {
		flags |= reactorModified
	}
	b = binary.AppendUvarint(append(b, Format), flags)
	b = unit.AppendStr(unit.AppendStr(unit.AppendStr(b, r.Name), r.FormulaID), r.Code)
	b, err := unit.AppendJSON(b, r.Configuration)
	if err != nil {
		return b, err
	}
	b = unit.AppendStr(b, r.ApplicationID)
	b = unit.AppendStr(unit.AppendTime(b, r.CreatedAt), r.CreatedBy)
	if r.ModifiedAt != nil {
		b = unit.AppendTime(b, *r.ModifiedAt)
	}
	return unit.AppendStr(b, r.ModifiedBy), nil
}

func (r *Record) DecodeRecord(key barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v RecordV0
		if err := unit.DecodeJSONV0(b, &v, "reactor"); err != nil {
			return err
		}
		*r = Record{Name: v.Name, FormulaID: v.FormulaID, Code: v.Code, Configuration: v.Configuration,
			ApplicationID: v.ApplicationID, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt,
			ModifiedBy: v.ModifiedBy, ModifiedAt: v.ModifiedAt}
		r.TenantID, r.ID = key.Tenant(), unit.KeyID(key.String())
		return nil
	}
	d, err := unit.BinaryRecord(b, Format, "reactor")
	if err != nil {
		return err
	}
	*r = Record{ID: unit.KeyID(key.String()), TenantID: key.Tenant()}
	flags := d.Uvarint()
	r.Name, r.FormulaID, r.Code = d.Str(), d.Str(), d.Str()
	r.Configuration = d.JSONMap()
	r.ApplicationID = d.Str()
	r.CreatedAt, r.CreatedBy = d.Time(), d.Str()
	r.ModifiedAt = d.OptTime(flags, reactorModified)
	r.ModifiedBy = d.Str()
	d.CheckFlags(flags, reactorModified<<1)
	if err := d.End(); err != nil {
		*r = Record{}
		return err
	}
	return nil
}

// RecordV0 is a reactor as format version 0 stored it: read, never
// written (testdata/records/reactor-v0.json).
type RecordV0 struct {
	ID            string         `json:"id"`
	TenantID      string         `json:"tenant_id"`
	Name          string         `json:"name"`
	FormulaID     string         `json:"formula_id,omitempty"`
	Code          string         `json:"code,omitempty"`
	Configuration map[string]any `json:"configuration"`
	ApplicationID string         `json:"application_id,omitempty"`
	CreatedBy     string         `json:"created_by,omitempty"`
	CreatedAt     time.Time      `json:"created_at"`
	ModifiedBy    string         `json:"modified_by,omitempty"`
	ModifiedAt    *time.Time     `json:"modified_at,omitempty"`
}
