package tokenvault

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
)

// The fixtures this package's own tests write straight into a Vault's
// store. Tests in other packages have the same helpers in
// internal/vaulttest, through internal/testseam.

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

// TappedEvent is an event a committed transaction queued, as the event
// tests see it: its envelope, its exact JSON and the ids of the webhooks
// it was queued for.
type TappedEvent struct {
	TenantID string
	Info     WebhookEventInfo
	JSON     []byte
	Targets  []string
}

// EventTap collects the events of a Vault (TapEvents).
type EventTap struct {
	mu     sync.Mutex
	events []TappedEvent
}

// TapEvents makes v tell the returned tap of every event a committed
// transaction queued. Call it before any webhook exists (emit reads the
// tap only for an event some webhook subscribes to).
func TapEvents(v *Vault) *EventTap {
	tap := &EventTap{}
	v.events.Tap = func(tid string, ev events.Outgoing, targets []*events.Webhook) {
		te := TappedEvent{TenantID: tid, JSON: slices.Clone(ev.JSON)}
		if err := json.Unmarshal(ev.JSON, &te.Info); err != nil {
			panic(err) // emit encoded it: never
		}
		for _, h := range targets {
			te.Targets = append(te.Targets, h.ID)
		}
		tap.mu.Lock()
		tap.events = append(tap.events, te)
		tap.mu.Unlock()
	}
	return tap
}

// Events returns the events tapped so far, in commit order.
func (e *EventTap) Events() []TappedEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.events)
}

// PutTestWebhook stores a webhook of tenant tid subscribed to types,
// enabled or not, directly (as CreateWebhook would), and returns its id
// and signing secret.
func PutTestWebhook(ctx context.Context, v *Vault, tid string, types []string, enabled bool) (id, secret string, err error) {
	var raw [24]byte
	rand.Read(raw[:])
	secret = "whsec_" + base64.StdEncoding.EncodeToString(raw[:])
	err = v.update(ctx, func(t *txn) error {
		rec := &events.Webhook{ID: t.v.ids.Next(t.Now), TenantID: tid, Name: "events test", URL: "https://receiver.example/hook",
			Events: types, Status: WebhookEnabled, Secret: secret, CreatedAt: t.Now, ModifiedAt: t.Now}
		if !enabled {
			rec.Status = WebhookDisabled
		}
		id = rec.ID
		events.Forget(t.Tx, tid)
		return t.PutRecord(barrier.Tenant(tid).Record(EntityWebhook, rec.ID), rec)
	})
	return id, secret, err
}
