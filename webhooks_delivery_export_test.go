package tokenvault

import (
	"context"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
)

// Test access to webhooks for the delivery tests (package tokenvault_test),
// which store webhooks directly rather than through the subscriptions API.

// HookForTest is a webhook to store with PutDeliveryWebhook.
type HookForTest struct {
	Name, URL, NotifyEmail, Secret string
	Events                         []string
	PreviousSecret                 string
	PreviousUntil                  time.Time
}

// PutDeliveryWebhook stores h as an enabled webhook of tenant tid and returns
// its id.
func PutDeliveryWebhook(v *Vault, tid string, h HookForTest) (string, error) {
	id := v.ids.Next(v.now())
	err := v.update(context.Background(), func(t *txn) error {
		rec := &events.Webhook{ID: id, TenantID: tid, Name: h.Name, URL: h.URL, Events: h.Events, Status: WebhookEnabled,
			NotifyEmail: h.NotifyEmail, Secret: h.Secret, CreatedBy: "test", CreatedAt: t.Now, ModifiedBy: "test",
			ModifiedAt: t.Now, PreviousSecret: h.PreviousSecret, PreviousUntil: h.PreviousUntil}
		events.Forget(t.Tx, tid)
		return t.PutRecord(barrier.Tenant(tid).Record(EntityWebhook, id), rec)
	})
	return id, err
}

// WebhookStateForTest returns a stored webhook's status, disabled reason and
// failing_since.
func WebhookStateForTest(v *Vault, tid, id string) (status, reason string, failingSince time.Time, err error) {
	err = v.view(context.Background(), func(t *txn) error {
		h, err := events.Get(t.Tx, tid, id)
		if err == nil {
			status, reason, failingSince = h.Status, h.DisabledReason, h.FailingSince
		}
		return err
	})
	return
}

// DeleteTestWebhook deletes a stored webhook (not its deliveries: the
// dispatcher prunes them).
func DeleteTestWebhook(v *Vault, tid, id string) error {
	return v.update(context.Background(), func(t *txn) error {
		events.Forget(t.Tx, tid)
		return t.Delete(barrier.Tenant(tid).Record(EntityWebhook, id))
	})
}

// WebhookStoreCounts counts the delivery queue's entries and tenant tid's
// delivery records.
func WebhookStoreCounts(v *Vault, tid string) (queued, records int, err error) {
	err = v.view(context.Background(), func(t *txn) error {
		queued, records = 0, 0
		if err := t.ScanKeys(barrier.WebhookQueue, func(barrier.Key, string) error { queued++; return nil }); err != nil {
			return err
		}
		return t.ScanKeys(barrier.Tenant(tid).Records(barrier.KindWebhookDelivery), func(barrier.Key, string) error { records++; return nil })
	})
	return
}
