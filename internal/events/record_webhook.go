package events

import (
	"encoding/binary"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a webhook subscription (Webhook), at
// tenant/<tid>/webhook/<id>, sealed with the tenant's keyring (it holds
// the signing secrets).
//
// Format version 1 (binary; see internal/unit's codec.go):
//
//	0x01           format version
//	uvarint flags  bit 0: previous_secret and previous_until follow;
//	               bit 1: failing_since follows;
//	               a bit this code does not know is refused
//	str   name
//	str   url
//	strs0 events         catalogue names, or "*"
//	str   status         enabled or disabled
//	str   disabled_reason  "" (enabled, or disabled by a caller), "gone"
//	                     (the receiver answered 410) or "failing"
//	str   notify_email
//	str   secret         "whsec_" and the base64 of its bytes
//	str   created_by
//	time  created_at
//	str   modified_by
//	time  modified_at
//	str   previous_secret  (bit 0) the secret before the last rotation
//	time  previous_until   (bit 0) until when it signs too
//	time  failing_since    (bit 1) the first failed attempt since the
//	                     last success
//
// The tenant and id are the store key's. There is no version 0: webhooks
// came after every record had its binary form.
const webhookFormat = 1

// Webhook is a webhook subscription as stored.
type Webhook struct {
	ID             string
	TenantID       string
	Name           string
	URL            string
	Events         []string
	Status         string
	DisabledReason string
	NotifyEmail    string
	Secret         string
	CreatedBy      string
	CreatedAt      time.Time
	ModifiedBy     string
	ModifiedAt     time.Time
	// PreviousSecret, until PreviousUntil, signs deliveries beside Secret
	// (the root's WebhookOptions.SecretOverlap).
	PreviousSecret string
	PreviousUntil  time.Time
	// FailingSince is the first failed attempt since the last success;
	// zero while the receiver answers.
	FailingSince time.Time
}

// Flag bits of Webhook.
const (
	webhookHasPrevious = 1 << iota
	webhookHasFailing
)

// AppendRecord encodes r, stored at key, in format version 1.
func (r *Webhook) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if err := unit.BelongsAt(key, unit.EntityWebhook, r.TenantID, r.ID); err != nil {
		return b, err
	}
	if err := unit.CheckRecordTimes("webhook", &r.CreatedAt, &r.ModifiedAt, &r.PreviousUntil, &r.FailingSince); err != nil {
		return b, err
	}
	flags := uint64(0)
	if r.PreviousSecret != "" {
		flags |= webhookHasPrevious
	}
	if !r.FailingSince.IsZero() {
		flags |= webhookHasFailing
	}
	b = binary.AppendUvarint(append(b, webhookFormat), flags)
	b = unit.AppendStrs0(unit.AppendStr(unit.AppendStr(b, r.Name), r.URL), r.Events)
	b = unit.AppendStr(unit.AppendStr(unit.AppendStr(b, r.Status), r.DisabledReason), r.NotifyEmail)
	b = unit.AppendStr(b, r.Secret)
	b = unit.AppendTime(unit.AppendStr(b, r.CreatedBy), r.CreatedAt)
	b = unit.AppendTime(unit.AppendStr(b, r.ModifiedBy), r.ModifiedAt)
	if flags&webhookHasPrevious != 0 {
		b = unit.AppendTime(unit.AppendStr(b, r.PreviousSecret), r.PreviousUntil)
	}
	if flags&webhookHasFailing != 0 {
		b = unit.AppendTime(b, r.FailingSince)
	}
	return b, nil
}

// DecodeRecord decodes r from b, stored at key; a flag or version it
// does not know is an error.
func (r *Webhook) DecodeRecord(key barrier.Key, b []byte) error {
	d, err := unit.BinaryRecord(b, webhookFormat, "webhook")
	if err != nil {
		return err
	}
	*r = Webhook{ID: unit.KeyID(key.String()), TenantID: key.Tenant()}
	flags := d.Uvarint()
	r.Name, r.URL, r.Events = d.Str(), d.Str(), d.Strs0()
	r.Status, r.DisabledReason, r.NotifyEmail = d.Str(), d.Str(), d.Str()
	r.Secret = d.Str()
	r.CreatedBy, r.CreatedAt = d.Str(), d.Time()
	r.ModifiedBy, r.ModifiedAt = d.Str(), d.Time()
	if flags&webhookHasPrevious != 0 {
		if r.PreviousSecret, r.PreviousUntil = d.Str(), d.Time(); r.PreviousSecret == "" {
			d.Fail("webhook: empty previous secret")
		}
	}
	if flags&webhookHasFailing != 0 {
		r.FailingSince = d.Time()
	}
	d.CheckFlags(flags, webhookHasFailing<<1)
	if err := d.End(); err != nil {
		*r = Webhook{}
		return err
	}
	return nil
}
