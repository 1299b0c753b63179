package tokenvault

import (
	"encoding/json"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// The stored form of a token intent (tokenIntentRecord), at
// tenant/<tid>/token_intent/<id>, sealed with the tenant's keyring.
//
// Format version 1 (binary; see records.go and records_parts.go):
//
//	0x01           format version
//	uvarint flags  none defined yet (0); a bit this code does not know is refused
//	str   type          token, card or bank
//	bytes data          the validated data as JSON (a card's without its cvc)
//	str   fingerprint   under the type's default expression ("" for none)
//	str   created_by    the key's actor id
//	str   created_by_type  application or session
//	time  created_at
//	time  expires_at
//
// The tenant and id are the store key's. There is no version 0: intents
// came after every record had its binary form.
const tokenIntentFormat = 1

// tokenIntentRecord is a token intent as stored.
type tokenIntentRecord struct {
	ID            string
	TenantID      string
	Type          string
	Data          json.RawMessage
	Fingerprint   string
	CreatedBy     string
	CreatedByType string
	CreatedAt     time.Time
	ExpiresAt     time.Time
}

func (r *tokenIntentRecord) expired(now time.Time) bool { return !now.Before(r.ExpiresAt) }

func (r *tokenIntentRecord) appendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if err := belongsAt(key, EntityTokenIntent, r.TenantID, r.ID); err != nil {
		return b, err
	}
	if err := checkRecordTimes("token intent", &r.CreatedAt, &r.ExpiresAt); err != nil {
		return b, err
	}
	b = appendUvarint(append(b, tokenIntentFormat), 0)
	b = appendBytes(appendStr(b, r.Type), r.Data)
	b = appendStr(appendStr(appendStr(b, r.Fingerprint), r.CreatedBy), r.CreatedByType)
	return appendTime(appendTime(b, r.CreatedAt), r.ExpiresAt), nil
}

func (r *tokenIntentRecord) decodeRecord(key barrier.Key, b []byte) error {
	d, err := binaryRecord(b, tokenIntentFormat, "token intent")
	if err != nil {
		return err
	}
	*r = tokenIntentRecord{ID: keyID(key.String()), TenantID: key.Tenant()}
	flags := d.uvarint()
	r.Type, r.Data = d.str(), d.bytes()
	r.Fingerprint, r.CreatedBy, r.CreatedByType = d.str(), d.str(), d.str()
	r.CreatedAt, r.ExpiresAt = d.time(), d.time()
	d.checkFlags(flags, 1)
	if err := d.end(); err != nil {
		*r = tokenIntentRecord{}
		return err
	}
	return nil
}
