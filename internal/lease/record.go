package lease

import (
	"encoding/binary"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Record is a background lease, at sys/lease/<name> (lease.go),
// sealed by the system keyring.
//
// Format version 1:
//
//	0x01       format version
//	str        holder: the instance id of the holder (the root's vault_instance.go)
//	uvarint    epoch: 1 for the first holder, one more at each change of
//	           holder
//	time       expires: when the hold ends unless renewed (on the holder's
//	           clock, Options.Now); zero once released
//
// The root's testdata/records/lease-v1.bin is one.
type Record struct {
	Holder  string
	Epoch   uint64
	Expires time.Time
}

const leaseFormat = 1

func (r *Record) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	if err := unit.CheckRecordTimes("lease", &r.Expires); err != nil {
		return b, err
	}
	b = append(b, leaseFormat)
	b = unit.AppendStr(b, r.Holder)
	b = binary.AppendUvarint(b, r.Epoch)
	b = unit.AppendTime(b, r.Expires)
	return b, nil
}

func (r *Record) DecodeRecord(_ barrier.Key, b []byte) error {
	d, err := unit.BinaryRecord(b, leaseFormat, "lease")
	if err != nil {
		return err
	}
	*r = Record{Holder: d.Str(), Epoch: d.Uvarint(), Expires: d.Time()}
	if err := d.End(); err != nil {
		*r = Record{}
		return err
	}
	return nil
}
