package reactors

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a reactor formula (FormulaRecord), at
// tenant/<tid>/reactor_formula/<id> (a tenant's private formula) and
// sys/formula/<id> (an official one, sealed with the system keyring).
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01           format version
//	uvarint flags  1 modified_at
//	str   name
//	str   description
//	str   type
//	str   code
//	list of configuration declarations, each: str name, str description,
//	      str type
//	list of request parameters, each: uvarint optional (0 or 1), str
//	      name, str description, str type
//	time  created_at
//	str   created_by
//	time  modified_at  (flag 1)
//	str   modified_by
//
// The tenant (none for an official formula) and id are the store key's.
// Version 0 is the JSON of the API's Formula the Vault stored before
// (FormulaRecordV0); it still reads, and a formula in it is written in
// version 1 on its next write and, for a private one, by the re-seal
// pass.
const FormulaFormat = 1

const formulaModified = 1

// FormulaRecord is a formula as stored.
type FormulaRecord struct {
	ID                string
	TenantID          string
	Name              string
	Description       string
	Type              string
	Code              string
	Configuration     []ConfigurationDeclaration
	RequestParameters []RequestParameter
	CreatedBy         string
	CreatedAt         time.Time
	ModifiedBy        string
	ModifiedAt        *time.Time
}

func (r *FormulaRecord) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if r.TenantID == "" {
		if key.Tenant() != "" || key.String() != barrier.OfficialFormula(r.ID).String() {
			return b, fmt.Errorf("%w: official formula %s does not belong at this key", unit.ErrRecord, r.ID)
		}
	} else if err := unit.BelongsAt(key, unit.EntityReactorFormula, r.TenantID, r.ID); err != nil {
		return b, err
	}
	if err := unit.CheckRecordTimes("formula", &r.CreatedAt, r.ModifiedAt); err != nil {
		return b, err
	}
	var flags uint64
	if r.ModifiedAt != nil {
		flags |= formulaModified
	}
	b = binary.AppendUvarint(append(b, FormulaFormat), flags)
	b = unit.AppendStr(unit.AppendStr(unit.AppendStr(unit.AppendStr(b, r.Name), r.Description), r.Type), r.Code)
	b = unit.AppendList(b, len(r.Configuration), r.Configuration == nil)
	for _, c := range r.Configuration {
		b = unit.AppendStr(unit.AppendStr(unit.AppendStr(b, c.Name), c.Description), c.Type)
	}
	b = unit.AppendList(b, len(r.RequestParameters), r.RequestParameters == nil)
	for _, p := range r.RequestParameters {
		var optional uint64
		if p.Optional {
			optional = 1
		}
		b = unit.AppendStr(unit.AppendStr(unit.AppendStr(binary.AppendUvarint(b, optional), p.Name), p.Description), p.Type)
	}
	b = unit.AppendStr(unit.AppendTime(b, r.CreatedAt), r.CreatedBy)
	if r.ModifiedAt != nil {
		b = unit.AppendTime(b, *r.ModifiedAt)
	}
	return unit.AppendStr(b, r.ModifiedBy), nil
}

func (r *FormulaRecord) DecodeRecord(key barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v FormulaRecordV0
		if err := unit.DecodeJSONV0(b, &v, "formula"); err != nil {
			return err
		}
		*r = FormulaRecord{Name: v.Name, Description: v.Description, Type: v.Type, Code: v.Code,
			Configuration: v.Configuration, RequestParameters: v.RequestParameters,
			CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt, ModifiedBy: v.ModifiedBy, ModifiedAt: v.ModifiedAt}
		r.TenantID, r.ID = key.Tenant(), unit.KeyID(key.String())
		return nil
	}
	d, err := unit.BinaryRecord(b, FormulaFormat, "formula")
	if err != nil {
		return err
	}
	*r = FormulaRecord{ID: unit.KeyID(key.String()), TenantID: key.Tenant()}
	flags := d.Uvarint()
	r.Name, r.Description, r.Type, r.Code = d.Str(), d.Str(), d.Str(), d.Str()
	if n := d.List(); n >= 0 {
		r.Configuration = make([]ConfigurationDeclaration, n)
		for i := range r.Configuration {
			c := &r.Configuration[i]
			c.Name, c.Description, c.Type = d.Str(), d.Str(), d.Str()
		}
	}
	if n := d.List(); n >= 0 {
		r.RequestParameters = make([]RequestParameter, n)
		for i := range r.RequestParameters {
			p := &r.RequestParameters[i]
			switch d.Uvarint() {
			case 0:
			case 1:
				p.Optional = true
			default:
				d.Fail("bad optional")
			}
			p.Name, p.Description, p.Type = d.Str(), d.Str(), d.Str()
			if d.Err() != nil {
				break
			}
		}
	}
	r.CreatedAt, r.CreatedBy = d.Time(), d.Str()
	r.ModifiedAt = d.OptTime(flags, formulaModified)
	r.ModifiedBy = d.Str()
	d.CheckFlags(flags, formulaModified<<1)
	if err := d.End(); err != nil {
		*r = FormulaRecord{}
		return err
	}
	return nil
}

// FormulaRecordV0 is the JSON of the API's Formula as format version 0
// stored it: read, never written (testdata/records/formula-v0.json).
type FormulaRecordV0 struct {
	ID                string                     `json:"id"`
	TenantID          string                     `json:"tenant_id,omitempty"`
	Name              string                     `json:"name"`
	Description       string                     `json:"description,omitempty"`
	Type              string                     `json:"type"`
	Code              string                     `json:"code"`
	Configuration     []ConfigurationDeclaration `json:"configuration"`
	RequestParameters []RequestParameter         `json:"request_parameters"`
	CreatedBy         string                     `json:"created_by,omitempty"`
	CreatedAt         time.Time                  `json:"created_at"`
	ModifiedBy        string                     `json:"modified_by,omitempty"`
	ModifiedAt        *time.Time                 `json:"modified_at,omitempty"`
}
