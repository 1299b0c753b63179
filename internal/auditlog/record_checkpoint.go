package auditlog

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// CheckpointRecord is a signed checkpoint of a tenant's audit chain
// (checkpoints.go), at tenant/<tid>/chain_checkpoint/<seq as 16 hex
// digits>, and, for the final checkpoint of a deleted tenant, at
// sys/chain-final/<tid> (sealed by the system keyring). The tenant id is
// the key's, not stored.
//
// Format version 1:
//
//	0x01       format version
//	uvarint    seq: the last line covered
//	32 bytes   hash: that line's hash
//	time       created_at
//	str        key_id: the signing key
//	byte       final: 1 for the final checkpoint, else 0
//	bytes      signature (Ed25519, 64 bytes)
//
// testdata/records/checkpoint-v1.bin is one.
type CheckpointRecord struct {
	TenantID  string
	Seq       uint64
	Hash      auditchain.Hash
	CreatedAt time.Time
	KeyID     string
	Final     bool
	Signature []byte
}

const checkpointFormat = 1

// CheckpointTenant is the tenant a checkpoint's store key names.
func CheckpointTenant(key barrier.Key) string {
	if tid := key.Tenant(); tid != "" {
		return tid
	}
	_, tid := barrier.FinalCheckpoints.Found([]byte(key.String()))
	return tid
}

func (r *CheckpointRecord) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if tid := CheckpointTenant(key); tid != r.TenantID {
		return b, fmt.Errorf("%w: checkpoint of tenant %s stored at %s", unit.ErrRecord, r.TenantID, key)
	}
	if key.Tenant() != "" && key != barrier.Tenant(r.TenantID).Checkpoint(r.Seq) {
		return b, fmt.Errorf("%w: checkpoint of seq %d stored at %s", unit.ErrRecord, r.Seq, key)
	}
	if err := unit.CheckRecordTimes("checkpoint", &r.CreatedAt); err != nil {
		return b, err
	}
	b = append(b, checkpointFormat)
	b = binary.AppendUvarint(b, r.Seq)
	b = append(b, r.Hash[:]...)
	b = unit.AppendTime(b, r.CreatedAt)
	b = unit.AppendStr(b, r.KeyID)
	if r.Final {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	return unit.AppendBytes(b, r.Signature), nil
}

func (r *CheckpointRecord) DecodeRecord(key barrier.Key, b []byte) error {
	d, err := unit.BinaryRecord(b, checkpointFormat, "checkpoint")
	if err != nil {
		return err
	}
	*r = CheckpointRecord{TenantID: CheckpointTenant(key), Seq: d.Uvarint()}
	copy(r.Hash[:], d.Next(uint64(len(r.Hash))))
	r.CreatedAt = d.Time()
	r.KeyID = d.Str()
	switch d.Byte() {
	case 0:
	case 1:
		r.Final = true
	default:
		d.Fail("bad final flag")
	}
	r.Signature = d.Bytes()
	if err := d.End(); err != nil {
		*r = CheckpointRecord{}
		return err
	}
	return nil
}

// Checkpoint is the checkpoint as auditchain and the API carry it.
func (r *CheckpointRecord) Checkpoint() auditchain.Checkpoint {
	return auditchain.Checkpoint{
		TenantID: r.TenantID, Seq: r.Seq, Hash: r.Hash, CreatedAt: r.CreatedAt, KeyID: r.KeyID,
		Final: r.Final, Signature: append([]byte(nil), r.Signature...),
	}
}

// CheckpointRecordOf is the stored form of c.
func CheckpointRecordOf(c *auditchain.Checkpoint) *CheckpointRecord {
	return &CheckpointRecord{
		TenantID: c.TenantID, Seq: c.Seq, Hash: c.Hash, CreatedAt: c.CreatedAt, KeyID: c.KeyID,
		Final: c.Final, Signature: append([]byte(nil), c.Signature...),
	}
}
