package access

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a key lookup entry (KeyRef), at sys/apikey/<hmac>,
// sys/nonce/<hmac>, sys/invite/<hmac> and sys/proxy/<hmac>: the record
// the secret's keyed hash leads to.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01   format version
//	str    tenant id
//	str    kind (application, session, tenant_invitation, proxy)
//	str    id
//
// Version 0 is the JSON written before ({"t":..., "k":..., "i":...};
// KeyRefV0); it still reads, and an entry in it is sealed again as it is
// by the re-seal pass: lookups are written once, when their record is.
const keyRefFormat = 1

// KeyRef is what a key lookup entry points to.
type KeyRef struct {
	TenantID string
	Kind     string
	ID       string
}

func (r *KeyRef) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	b = append(b, keyRefFormat)
	b = unit.AppendStr(b, r.TenantID)
	b = unit.AppendStr(b, r.Kind)
	return unit.AppendStr(b, r.ID), nil
}

func (r *KeyRef) DecodeRecord(_ barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v KeyRefV0
		if err := unit.DecodeJSONV0(b, &v, "key lookup"); err != nil {
			return err
		}
		*r = KeyRef(v)
		return nil
	}
	d, err := unit.BinaryRecord(b, keyRefFormat, "key lookup")
	if err != nil {
		return err
	}
	*r = KeyRef{TenantID: d.Str(), Kind: d.Str(), ID: d.Str()}
	if err := d.End(); err != nil {
		*r = KeyRef{}
		return err
	}
	return nil
}

// KeyRefV0 is a KeyRef as format version 0 stored it: read, never written
// (testdata/records/keyref-v0.json).
type KeyRefV0 struct {
	TenantID string `json:"t"`
	Kind     string `json:"k"`
	ID       string `json:"i"`
}
