package events

import (
	"encoding/binary"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of one delivery of an event to one webhook
// (Delivery), at tenant/<tid>/webhook_delivery/<webhook
// id>/<delivery id>, sealed with the tenant's keyring (it holds the
// event). Its entry in the delivery queue, sys/whq/<tid>/<webhook
// id>/<due>/<delivery id>, says when it is next due; a finished delivery
// has none.
//
// Format version 1 (binary; see internal/unit's codec.go):
//
//	0x01           format version
//	str   event_id       the webhook-id of every attempt
//	str   event_type
//	bytes event          the Info JSON, as emitted
//	time  created_at     when the event's transaction ran
//	str   status         pending, succeeded or failed
//	uvarint attempts     POSTs made so far
//	time  last_attempt_at (zero: none yet)
//	uvarint response_status  of the last attempt (0: no answer)
//	uvarint duration_us  of the last attempt, in microseconds
//	bytes response       the first bytes of the last answer's body (<= 256)
//	str   error          why the last attempt failed ("" when it did not);
//	                     never a secret
//	time  next_attempt_at when it is due (zero once finished)
//	str   claim          the claim of the instance attempting it ("": none)
//	time  claimed_until  until when that claim holds
//
// The tenant, webhook and delivery ids are the store key's.
const webhookDeliveryFormat = 1

// MaxResponsePrefix bounds the receiver's answer a delivery keeps.
const MaxResponsePrefix = 256

// Delivery is one delivery as stored.
type Delivery struct {
	ID             string
	TenantID       string
	WebhookID      string
	EventID        string
	EventType      string
	Event          []byte
	CreatedAt      time.Time
	Status         string
	Attempts       int
	LastAttemptAt  time.Time
	ResponseStatus int
	Duration       time.Duration
	Response       []byte
	Error          string
	NextAttemptAt  time.Time
	Claim          string
	ClaimedUntil   time.Time
}

// AppendRecord encodes r, stored at key, in format version 1.
func (r *Delivery) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if err := unit.BelongsAt(key, barrier.KindWebhookDelivery, r.TenantID, r.WebhookID+"/"+r.ID); err != nil {
		return b, err
	}
	if err := unit.CheckRecordTimes("webhook delivery", &r.CreatedAt, &r.LastAttemptAt, &r.NextAttemptAt, &r.ClaimedUntil); err != nil {
		return b, err
	}
	resp := r.Response
	if len(resp) > MaxResponsePrefix {
		resp = resp[:MaxResponsePrefix]
	}
	b = append(b, webhookDeliveryFormat)
	b = unit.AppendBytes(unit.AppendStr(unit.AppendStr(b, r.EventID), r.EventType), r.Event)
	b = unit.AppendStr(unit.AppendTime(b, r.CreatedAt), r.Status)
	b = unit.AppendTime(binary.AppendUvarint(b, uint64(max(r.Attempts, 0))), r.LastAttemptAt)
	b = binary.AppendUvarint(binary.AppendUvarint(b, uint64(max(r.ResponseStatus, 0))), uint64(max(r.Duration.Microseconds(), 0)))
	b = unit.AppendStr(unit.AppendBytes(b, resp), r.Error)
	b = unit.AppendStr(unit.AppendTime(b, r.NextAttemptAt), r.Claim)
	return unit.AppendTime(b, r.ClaimedUntil), nil
}

// DecodeRecord decodes r from b, stored at key; a flag or version it
// does not know is an error.
func (r *Delivery) DecodeRecord(key barrier.Key, b []byte) error {
	d, err := unit.BinaryRecord(b, webhookDeliveryFormat, "webhook delivery")
	if err != nil {
		return err
	}
	rest := strings.TrimPrefix(key.String(), barrier.Tenant(key.Tenant()).Records(barrier.KindWebhookDelivery).String())
	whid, did, _ := strings.Cut(rest, "/")
	*r = Delivery{ID: did, TenantID: key.Tenant(), WebhookID: whid}
	r.EventID, r.EventType, r.Event = d.Str(), d.Str(), d.Bytes()
	r.CreatedAt, r.Status = d.Time(), d.Str()
	r.Attempts, r.LastAttemptAt = int(min(d.Uvarint(), 1<<20)), d.Time()
	r.ResponseStatus, r.Duration = int(min(d.Uvarint(), 999)), time.Duration(min(d.Uvarint(), 1<<40))*time.Microsecond
	if r.Response, r.Error = d.Bytes(), d.Str(); len(r.Response) > MaxResponsePrefix {
		d.Fail("webhook delivery: response prefix too long")
	}
	r.NextAttemptAt, r.Claim = d.Time(), d.Str()
	r.ClaimedUntil = d.Time()
	if err := d.End(); err != nil {
		*r = Delivery{}
		return err
	}
	return nil
}
