package tokenvault

import (
	"encoding/binary"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a kept count (countRecord), at
// tenant/<tid>/count/<kind>, tenant/<tid>/count/tok-t/<type>,
// tenant/<tid>/count/tok-c/<hex mac> and sys/count/tenants (the base
// row), and of a change to one, at <count key>/+/<instance>/<stamp> (a
// delta row; internal/barrier's "Kept counts"): N is the count, or the
// change. The count is the sum of both.
//
// Format version 1 (binary; see records.go):
//
//	0x01     format version
//	varint   n
//
// Version 0 is the JSON written before ({"n":...}; countRecordV0); it
// still reads, and a base row in it is written in version 1 when delta
// rows are next folded into it.
const countFormat = 1

// countRecord is a kept count, sealed at its count key.
type countRecord struct {
	N int64
}

func (r *countRecord) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	return binary.AppendVarint(append(b, countFormat), r.N), nil
}

func (r *countRecord) DecodeRecord(_ barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v countRecordV0
		if err := unit.DecodeJSONV0(b, &v, "count"); err != nil {
			return err
		}
		*r = countRecord(v)
		return nil
	}
	d, err := unit.BinaryRecord(b, countFormat, "count")
	if err != nil {
		return err
	}
	*r = countRecord{N: d.Varint()}
	if err := d.End(); err != nil {
		*r = countRecord{}
		return err
	}
	return nil
}

// countRecordV0 is a countRecord as format version 0 stored it
// (testdata/records/count-v0.json).
type countRecordV0 struct {
	N int64 `json:"n"`
}

// countCodec gives the barrier, which keeps the counts, their record
// format.
type countCodec struct{}

func (countCodec) EncodeCount(k barrier.Key, n int64) []byte {
	b, _ := (&countRecord{N: n}).AppendRecord(nil, k) // never fails
	return b
}

func (countCodec) DecodeCount(k barrier.Key, b []byte) (int64, error) {
	var r countRecord
	err := r.DecodeRecord(k, b)
	return r.N, err
}
