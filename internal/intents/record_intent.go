package intents

import (
	"encoding/binary"
	"encoding/json"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a token intent (Record), at
// tenant/<tid>/token_intent/<id>, sealed with the tenant's keyring.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01           format version
//	uvarint flags  bit 0: created_from follows; a bit this code does not know is refused
//	str   type          token, card or bank
//	bytes data          the validated data as JSON (a card's without its cvc)
//	str   fingerprint   under the type's default expression ("" for none)
//	str   created_by    the key's actor id
//	str   created_by_type  application or session
//	time  created_at
//	time  expires_at
//	str   created_from  (flag bit 0) the keyed MAC of the creating call's
//	                    client address that indexes the intent for its caps
//	                    (limits.go); absent in intents written before
//
// The tenant and id are the store key's. There is no version 0: intents
// came after every record had its binary form.
const Format = 1

// Record is a token intent as stored.
type Record struct {
	ID            string
	TenantID      string
	Type          string
	Data          json.RawMessage
	Fingerprint   string
	CreatedBy     string
	CreatedByType string
	CreatedAt     time.Time
	ExpiresAt     time.Time
	// CreatedFrom is the keyed MAC of the creating call's client address
	// (the root's txn.pendingAddress), "" in intents written before the caps.
	CreatedFrom string
}

// intentCreatedFrom is the flag bit of Record.CreatedFrom.
const intentCreatedFrom = 1

// Expired reports whether the intent has expired at now.
func (r *Record) Expired(now time.Time) bool { return !now.Before(r.ExpiresAt) }

func (r *Record) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if err := unit.BelongsAt(key, unit.EntityTokenIntent, r.TenantID, r.ID); err != nil {
		return b, err
	}
	if err := unit.CheckRecordTimes("token intent", &r.CreatedAt, &r.ExpiresAt); err != nil {
		return b, err
	}
	flags := uint64(0)
	if r.CreatedFrom != "" {
		flags |= intentCreatedFrom
	}
	b = binary.AppendUvarint(append(b, Format), flags)
	b = unit.AppendBytes(unit.AppendStr(b, r.Type), r.Data)
	b = unit.AppendStr(unit.AppendStr(unit.AppendStr(b, r.Fingerprint), r.CreatedBy), r.CreatedByType)
	b = unit.AppendTime(unit.AppendTime(b, r.CreatedAt), r.ExpiresAt)
	if r.CreatedFrom != "" {
		b = unit.AppendStr(b, r.CreatedFrom)
	}
	return b, nil
}

func (r *Record) DecodeRecord(key barrier.Key, b []byte) error {
	d, err := unit.BinaryRecord(b, Format, "token intent")
	if err != nil {
		return err
	}
	*r = Record{ID: unit.KeyID(key.String()), TenantID: key.Tenant()}
	flags := d.Uvarint()
	r.Type, r.Data = d.Str(), d.Bytes()
	r.Fingerprint, r.CreatedBy, r.CreatedByType = d.Str(), d.Str(), d.Str()
	r.CreatedAt, r.ExpiresAt = d.Time(), d.Time()
	if flags&intentCreatedFrom != 0 {
		if r.CreatedFrom = d.Str(); r.CreatedFrom == "" {
			d.Fail("token intent: empty created_from")
		}
	}
	d.CheckFlags(flags, intentCreatedFrom<<1)
	if err := d.End(); err != nil {
		*r = Record{}
		return err
	}
	return nil
}

// IndexKeys are an intent's entries in the indexes of its caps (none
// for an intent written before them).
func (r *Record) IndexKeys() []barrier.Key {
	if r.CreatedFrom == "" {
		return nil
	}
	return barrier.Tenant(r.TenantID).CapEntries(barrier.TokenIntentCaps, r.CreatedBy, r.CreatedFrom, r.ExpiresAt, r.ID)
}
