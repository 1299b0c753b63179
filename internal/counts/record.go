package counts

import (
	"encoding/binary"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a kept count (Record), at tenant/<tid>/count/<kind>,
// tenant/<tid>/count/tok-t/<type>, tenant/<tid>/count/tok-c/<hex mac> and
// sys/count/tenants (the base row), and of a change to one, at
// <count key>/+/<instance>/<stamp> (a delta row; internal/barrier's "Kept
// counts"): N is the count, or the change. The count is the sum of both.
//
// Format version 1 (binary; see internal/unit's codec):
//
//	0x01     format version
//	varint   n
//
// Version 0 is the JSON written before ({"n":...}; RecordV0); it still
// reads, and a base row in it is written in version 1 when delta rows are
// next folded into it.
const format = 1

// Kind is the family name of the kept counts under a tenant.
const Kind = "count"

// RecordKinds are the families of a tenant's keys that hold this
// package's records (unit.RecordKind).
var RecordKinds = []unit.RecordKind{
	{Family: func(tid string) barrier.Prefix { return barrier.Tenant(tid).Records(Kind) }, New: func() unit.Record { return &Record{} }},
}

// Record is a kept count, sealed at its count key.
type Record struct {
	N int64
}

// AppendRecord appends r in format version 1 (unit.Record).
func (r *Record) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	return binary.AppendVarint(append(b, format), r.N), nil
}

// DecodeRecord reads r in either format version (unit.Record).
func (r *Record) DecodeRecord(_ barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v RecordV0
		if err := unit.DecodeJSONV0(b, &v, "count"); err != nil {
			return err
		}
		*r = Record(v)
		return nil
	}
	d, err := unit.BinaryRecord(b, format, "count")
	if err != nil {
		return err
	}
	*r = Record{N: d.Varint()}
	if err := d.End(); err != nil {
		*r = Record{}
		return err
	}
	return nil
}

// RecordV0 is a Record as format version 0 stored it
// (testdata/records/count-v0.json in the root).
type RecordV0 struct {
	N int64 `json:"n"`
}

// Codec gives the barrier, which keeps the counts, their record format
// (barrier.CountCodec).
type Codec struct{}

// EncodeCount is count n, stored at k, in the current format.
func (Codec) EncodeCount(k barrier.Key, n int64) []byte {
	b, _ := (&Record{N: n}).AppendRecord(nil, k) // never fails
	return b
}

// DecodeCount reads a count, or a change to one, stored at k.
func (Codec) DecodeCount(k barrier.Key, b []byte) (int64, error) {
	var r Record
	err := r.DecodeRecord(k, b)
	return r.N, err
}
