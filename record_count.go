package tokenvault

import "encoding/binary"

// The stored form of a kept count (countRecord), at
// tenant/<tid>/count/<kind>, tenant/<tid>/count/tok-t/<type>,
// tenant/<tid>/count/tok-c/<hex mac> and sys/count/tenants.
//
// Format version 1 (binary; see records.go):
//
//	0x01     format version
//	varint   n
//
// Version 0 is the JSON written before ({"n":...}; countRecordV0); it
// still reads, and a count in it is written in version 1 by the next
// commit that changes it.
const countFormat = 1

// countRecord is a kept count, sealed at its count key.
type countRecord struct {
	N int64
}

func (r *countRecord) appendRecord(b []byte, _ storeKey) ([]byte, error) {
	return binary.AppendVarint(append(b, countFormat), r.N), nil
}

func (r *countRecord) decodeRecord(_ storeKey, b []byte) error {
	if isJSONV0(b) {
		var v countRecordV0
		if err := decodeJSONV0(b, &v, "count"); err != nil {
			return err
		}
		*r = countRecord(v)
		return nil
	}
	d, err := binaryRecord(b, countFormat, "count")
	if err != nil {
		return err
	}
	*r = countRecord{N: d.varint()}
	if err := d.end(); err != nil {
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
