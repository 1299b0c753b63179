package vaulttest

import (
	"context"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Test access to webhooks for the delivery tests,
// which store webhooks directly rather than through the subscriptions API.

// DeliveryHook is a webhook to store with PutDeliveryWebhook.
type DeliveryHook struct {
	Name, URL, NotifyEmail, Secret string
	Events                         []string
	PreviousSecret                 string
	PreviousUntil                  time.Time
}

// PutDeliveryWebhook stores h as an enabled webhook of tenant tid and returns
// its id.
func PutDeliveryWebhook(v *tokenvault.Vault, tid string, h DeliveryHook) (string, error) {
	id := testseam.Of(v).NextID(testseam.Of(v).Now())
	err := testseam.Of(v).Work.Update(context.Background(), func(t *unit.Tx) error {
		rec := &events.Webhook{ID: id, TenantID: tid, Name: h.Name, URL: h.URL, Events: h.Events, Status: events.Enabled,
			NotifyEmail: h.NotifyEmail, Secret: h.Secret, CreatedBy: "test", CreatedAt: t.Now, ModifiedBy: "test",
			ModifiedAt: t.Now, PreviousSecret: h.PreviousSecret, PreviousUntil: h.PreviousUntil}
		events.Forget(t, tid)
		return t.PutRecord(barrier.Tenant(tid).Record(unit.EntityWebhook, id), rec)
	})
	return id, err
}

// WebhookState returns a stored webhook's status, disabled reason and
// failing_since.
func WebhookState(v *tokenvault.Vault, tid, id string) (status, reason string, failingSince time.Time, err error) {
	err = testseam.Of(v).Work.View(context.Background(), func(t *unit.Tx) error {
		h, err := events.Get(t, tid, id)
		if err == nil {
			status, reason, failingSince = h.Status, h.DisabledReason, h.FailingSince
		}
		return err
	})
	return
}

// DeleteWebhook deletes a stored webhook (not its deliveries: the
// dispatcher prunes them).
func DeleteWebhook(v *tokenvault.Vault, tid, id string) error {
	return testseam.Of(v).Work.Update(context.Background(), func(t *unit.Tx) error {
		events.Forget(t, tid)
		return t.Delete(barrier.Tenant(tid).Record(unit.EntityWebhook, id))
	})
}

// WebhookStoreCounts counts the delivery queue's entries and tenant tid's
// delivery records.
func WebhookStoreCounts(v *tokenvault.Vault, tid string) (queued, records int, err error) {
	err = testseam.Of(v).Work.View(context.Background(), func(t *unit.Tx) error {
		queued, records = 0, 0
		if err := t.ScanKeys(barrier.WebhookQueue, func(barrier.Key, string) error { queued++; return nil }); err != nil {
			return err
		}
		return t.ScanKeys(barrier.Tenant(tid).Records(barrier.KindWebhookDelivery), func(barrier.Key, string) error { records++; return nil })
	})
	return
}
