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

func (v *Vault) LogLinesForTest(ctx context.Context, tid string, n, perTxn int) error {
	for n > 0 {
		m := min(n, perTxn)
		err := v.update(ctx, func(t *txn) error {
			for range m {
				if err := t.Log(actor{ID: tid, Type: "user"}, tid, EntityTenant, tid, OpRead, "Tenant read"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		n -= m
	}
	return v.linkNow(ctx)
}

type HookForTest struct {
	Name, URL, NotifyEmail, Secret string
	Events                         []string
	PreviousSecret                 string
	PreviousUntil                  time.Time
}

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

type TappedEvent struct {
	TenantID string
	Info     WebhookEventInfo
	JSON     []byte
	Targets  []string
}

type EventTap struct {
	mu     sync.Mutex
	events []TappedEvent
}

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

func (e *EventTap) Events() []TappedEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.events)
}

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
