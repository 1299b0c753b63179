package auditlog

import (
	"fmt"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// KeyRecord is one of the vault's checkpoint signing keys
// (audit_keys.go), at sys/audit-key/<key id>, sealed by the system
// keyring. Its private part, the 32-byte Ed25519 seed, is wrapped by the
// key wrapper (the root of trust) for the record's store key, as the
// keyrings are: a KeyWrapper rotation wraps it again. The key id is the
// key's, not stored (auditchain.KeyID of the public key, which decoding
// does not check: the signer does).
//
// Format version 1:
//
//	0x01       format version
//	bytes      public key (32 bytes)
//	bytes      seed, wrapped (the key wrapper's envelope, keywrap.go)
//	time       created_at
//	time       retired_at (zero: the key in use)
//
// testdata/records/audit-key-v1.bin is one.
type KeyRecord struct {
	ID        string
	Public    []byte
	Wrapped   []byte
	CreatedAt time.Time
	RetiredAt time.Time
}

const auditKeyFormat = 1

func (r *KeyRecord) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if key != barrier.AuditKey(r.ID) {
		return b, fmt.Errorf("%w: audit key %s stored at %s", unit.ErrRecord, r.ID, key)
	}
	if err := unit.CheckRecordTimes("audit key", &r.CreatedAt, &r.RetiredAt); err != nil {
		return b, err
	}
	b = append(b, auditKeyFormat)
	b = unit.AppendBytes(b, r.Public)
	b = unit.AppendBytes(b, r.Wrapped)
	b = unit.AppendTime(b, r.CreatedAt)
	return unit.AppendTime(b, r.RetiredAt), nil
}

func (r *KeyRecord) DecodeRecord(key barrier.Key, b []byte) error {
	d, err := unit.BinaryRecord(b, auditKeyFormat, "audit key")
	if err != nil {
		return err
	}
	_, id := barrier.AuditKeys.Found([]byte(key.String()))
	*r = KeyRecord{ID: id, Public: d.Bytes(), Wrapped: d.Bytes(), CreatedAt: d.Time(), RetiredAt: d.Time()}
	if err := d.End(); err != nil {
		*r = KeyRecord{}
		return err
	}
	return nil
}

// String keeps the wrapped seed out of any log line that prints a record.
func (r *KeyRecord) String() string { return "tokenvault.auditKey{" + r.ID + "}" }
