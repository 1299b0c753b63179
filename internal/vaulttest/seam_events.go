package vaulttest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// TappedEvent is an event a committed transaction queued, as the event
// tests see it: its envelope, its exact JSON and the ids of the webhooks
// it was queued for.
type TappedEvent struct {
	TenantID string
	Info     tokenvault.WebhookEventInfo
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
func TapEvents(v *tokenvault.Vault) *EventTap {
	tap := &EventTap{}
	testseam.Of(v).Events.Tap = func(tid string, ev events.Outgoing, targets []*events.Webhook) {
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

// PutEventWebhook stores a webhook of tenant tid subscribed to types,
// enabled or not, directly (as CreateWebhook would), and returns its id
// and signing secret.
func PutEventWebhook(ctx context.Context, v *tokenvault.Vault, tid string, types []string, enabled bool) (id, secret string, err error) {
	var raw [24]byte
	rand.Read(raw[:])
	secret = "whsec_" + base64.StdEncoding.EncodeToString(raw[:])
	err = testseam.Of(v).Work.Update(ctx, func(t *unit.Tx) error {
		rec := &events.Webhook{ID: testseam.Of(v).NextID(t.Now), TenantID: tid, Name: "events test", URL: "https://receiver.example/hook",
			Events: types, Status: events.Enabled, Secret: secret, CreatedAt: t.Now, ModifiedAt: t.Now}
		if !enabled {
			rec.Status = events.Disabled
		}
		id = rec.ID
		events.Forget(t, tid)
		return t.PutRecord(barrier.Tenant(tid).Record(unit.EntityWebhook, rec.ID), rec)
	})
	return id, secret, err
}

// EventSequenceObjects lists the objects ("<entity type>/<id>") of tenant
// tid that have an event sequence counter.
func EventSequenceObjects(ctx context.Context, v *tokenvault.Vault, tid string) ([]string, error) {
	var out []string
	err := testseam.Of(v).Work.View(ctx, func(t *unit.Tx) error {
		return t.ScanKeys(barrier.Tenant(tid).Records("count"), func(_ barrier.Key, rest string) error {
			if obj, ok := strings.CutPrefix(rest, "ev/"); ok {
				out = append(out, obj)
			}
			return nil
		})
	})
	return out, err
}
