package export

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of an export's manifest (Record), at
// tenant/<tid>/export/<id>.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01           format version
//	uvarint flags  none yet; a bit this code does not know is refused
//	bytes manifest the signed manifest's JSON (Manifest), as served
//
// The tenant and the id are the store key's, and the manifest's must be
// them. There is no version 0.
const recordFormat = 1

// Record is an export's signed manifest as stored.
type Record struct {
	Manifest Manifest
}

func (r *Record) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if err := unit.BelongsAt(key, KindExport, r.Manifest.TenantID, r.Manifest.ID); err != nil {
		return b, err
	}
	if err := unit.CheckRecordTimes("export", &r.Manifest.StartedAt, &r.Manifest.FinishedAt); err != nil {
		return b, err
	}
	m, err := json.Marshal(&r.Manifest)
	if err != nil {
		return b, err
	}
	b = binary.AppendUvarint(append(b, recordFormat), 0)
	return unit.AppendBytes(b, m), nil
}

func (r *Record) DecodeRecord(key barrier.Key, b []byte) error {
	d, err := unit.BinaryRecord(b, recordFormat, "export")
	if err != nil {
		return err
	}
	flags := d.Uvarint()
	m := d.Bytes()
	d.CheckFlags(flags, 1)
	if err := d.End(); err != nil {
		return err
	}
	*r = Record{}
	if err := json.Unmarshal(m, &r.Manifest); err != nil {
		return fmt.Errorf("%w: export manifest: %v", unit.ErrRecord, err)
	}
	if err := unit.BelongsAt(key, KindExport, r.Manifest.TenantID, r.Manifest.ID); err != nil {
		*r = Record{}
		return err
	}
	return nil
}
