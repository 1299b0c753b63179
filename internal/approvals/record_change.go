package approvals

import (
	"encoding/binary"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a change waiting for approval, or decided (Change),
// at tenant/<tid>/approval/<id>, sealed with the tenant's keyring.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01           format version
//	uvarint flags  none yet; a bit this code does not know is refused
//	str   operation      what the change does (Op*)
//	str   target         the id of the entity it changes ("" for none yet)
//	bytes payload        the request to apply, as JSON: it may hold the
//	                     new key of an application (sealed like the rest;
//	                     cleared once the change is decided)
//	bytes before, after  what the change does, as JSON views (the diff)
//	uvarint required     the approvals it needs, as of its request
//	str   requested_by, requested_by_type
//	time  requested_at, expires_at
//	uvarint n, then n times: str by, str by_type, time at   the approvals
//	str   status         pending, applied, rejected, expired or failed
//	str   reason         why it failed or was rejected ("" for none)
//	str   decided_by, decided_by_type
//	time  decided_at     (zero while pending)
//	time  used_at        when an applied OpDetokenizeBulk was used (zero before)
//
// The tenant and id are the store key's. There is no version 0.
const changeFormat = 1

// The statuses of a change.
const (
	Pending  = "pending"
	Applied  = "applied"
	Rejected = "rejected"
	Expired  = "expired"
	Failed   = "failed"
)

// Approval is one approval of a change.
type Approval struct {
	By     string
	ByType string
	At     time.Time
}

// Change is a change waiting for approval, or decided, as stored.
type Change struct {
	ID              string
	TenantID        string
	Operation       string
	Target          string
	Payload         []byte
	Before          []byte
	After           []byte
	Required        int
	RequestedBy     string
	RequestedByType string
	RequestedAt     time.Time
	ExpiresAt       time.Time
	Approvals       []Approval
	Status          string
	Reason          string
	DecidedBy       string
	DecidedByType   string
	DecidedAt       time.Time
	// UsedAt is when an applied OpDetokenizeBulk was used (Use); zero
	// before, and for other operations.
	UsedAt time.Time
}

// ExpiredAt reports whether the change, pending, has expired at now.
func (c *Change) ExpiredAt(now time.Time) bool {
	return c.Status == Pending && !now.Before(c.ExpiresAt)
}

func (c *Change) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if err := unit.BelongsAt(key, KindChange, c.TenantID, c.ID); err != nil {
		return b, err
	}
	if err := unit.CheckRecordTimes("approval", &c.RequestedAt, &c.ExpiresAt, &c.DecidedAt, &c.UsedAt); err != nil {
		return b, err
	}
	b = binary.AppendUvarint(append(b, changeFormat), 0)
	b = unit.AppendStr(unit.AppendStr(b, c.Operation), c.Target)
	b = unit.AppendBytes(unit.AppendBytes(unit.AppendBytes(b, c.Payload), c.Before), c.After)
	b = binary.AppendUvarint(b, uint64(c.Required))
	b = unit.AppendStr(unit.AppendStr(b, c.RequestedBy), c.RequestedByType)
	b = unit.AppendTime(unit.AppendTime(b, c.RequestedAt), c.ExpiresAt)
	b = binary.AppendUvarint(b, uint64(len(c.Approvals)))
	for _, a := range c.Approvals {
		if err := unit.CheckRecordTimes("approval", &a.At); err != nil {
			return b, err
		}
		b = unit.AppendTime(unit.AppendStr(unit.AppendStr(b, a.By), a.ByType), a.At)
	}
	b = unit.AppendStr(unit.AppendStr(b, c.Status), c.Reason)
	b = unit.AppendStr(unit.AppendStr(b, c.DecidedBy), c.DecidedByType)
	return unit.AppendTime(unit.AppendTime(b, c.DecidedAt), c.UsedAt), nil
}

func (c *Change) DecodeRecord(key barrier.Key, b []byte) error {
	d, err := unit.BinaryRecord(b, changeFormat, "approval")
	if err != nil {
		return err
	}
	*c = Change{ID: unit.KeyID(key.String()), TenantID: key.Tenant()}
	flags := d.Uvarint()
	c.Operation, c.Target = d.Str(), d.Str()
	c.Payload, c.Before, c.After = d.Bytes(), d.Bytes(), d.Bytes()
	c.Required = int(d.Uvarint())
	c.RequestedBy, c.RequestedByType = d.Str(), d.Str()
	c.RequestedAt, c.ExpiresAt = d.Time(), d.Time()
	if n := d.Count(); n > 0 {
		c.Approvals = make([]Approval, n)
		for i := range c.Approvals {
			c.Approvals[i] = Approval{By: d.Str(), ByType: d.Str(), At: d.Time()}
		}
	}
	c.Status, c.Reason = d.Str(), d.Str()
	c.DecidedBy, c.DecidedByType = d.Str(), d.Str()
	c.DecidedAt, c.UsedAt = d.Time(), d.Time()
	d.CheckFlags(flags, 1)
	if err := d.End(); err != nil {
		*c = Change{}
		return err
	}
	return nil
}
