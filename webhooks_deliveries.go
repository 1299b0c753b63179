package tokenvault

import (
	"cmp"
	"context"
	"encoding/json"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The deliveries of a webhook, as its owner sees them: recent attempts
// (GET /webhooks/{id}/deliveries), a redelivery, and a test event.

// WebhookDelivery is one event's delivery to one webhook: its state and
// its last attempt. It never holds the event's body nor more than a short
// prefix of the receiver's answer.
type WebhookDelivery = events.DeliveryInfo

// MaxDeliveriesPageSize bounds a page of ListWebhookDeliveries.
const MaxDeliveriesPageSize = 100

// ListWebhookDeliveries lists the deliveries of webhook webhookID, newest
// first, a page at a time by cursor (req.Start is the After of the page
// before; Page may only be 0 or 1). Finished deliveries are kept for
// WebhookOptions.DeliveryRetention. Requires webhook:read. The
// pagination's TotalItems counts this page and, when more follow, one
// more: a lower bound.
//
// Returns Invalid for a bad page, size or cursor, NotFound for an
// unknown webhook (or another tenant's), Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit,
// PermissionDenied without webhook:read, or Internal.
func (v *Vault) ListWebhookDeliveries(ctx context.Context, key Credential, webhookID string, req PageRequest) (*Page[WebhookDelivery], error) {
	pg, err := req.Resolve(MaxDeliveriesPageSize)
	if err != nil {
		return nil, err
	}
	if pg.Page > 1 {
		return nil, unit.InvalidField("page", "deliveries are paged by cursor: pass pagination.after as start")
	}
	if pg.Start != "" && !unit.ValidID(pg.Start) {
		return nil, unit.InvalidField("start", "is not a cursor returned by this list (pagination.after)")
	}
	out := &Page[WebhookDelivery]{Data: []WebhookDelivery{}}
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermWebhookRead)
		if err != nil {
			return err
		}
		if _, err := t.mustWebhook(p.TenantID, webhookID); err != nil {
			return err
		}
		vals, err := t.ScanValuesBack(barrier.Tenant(p.TenantID).WebhookDeliveries(webhookID), pg.Start, pg.Size+1)
		if err != nil {
			return err
		}
		more := len(vals) > pg.Size
		if more {
			vals = vals[:pg.Size]
		}
		for _, sv := range vals {
			var rec events.Delivery
			if err := t.OpenRecord(sv.Key, sv.Raw, &rec); err != nil {
				return err
			}
			out.Data = append(out.Data, rec.API())
		}
		out.Pagination = Pagination{TotalItems: len(out.Data), PageNumber: 1, PageSize: pg.Size, TotalPages: 1}
		if more {
			out.Pagination.TotalItems++
			out.Pagination.TotalPages = 2
			out.Pagination.After = paging.EncodeCursor(out.Data[len(out.Data)-1].ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RedeliverWebhookDelivery queues delivery deliveryID of webhook
// webhookID again, due now: pending, its attempts counted from zero, the
// same event (the same webhook-id) as before. Requires webhook:update.
//
// Returns NotFound for an unknown webhook or delivery (or another
// tenant's), Conflict when the webhook is disabled or the delivery is
// being attempted, Unauthenticated for a key that is missing, unknown or
// expired, RateLimited over a rate limit or when a finished delivery
// would go past a cap of pending deliveries (internal/events' pending.go), PermissionDenied without
// webhook:update, or Internal.
func (v *Vault) RedeliverWebhookDelivery(ctx context.Context, key Credential, webhookID, deliveryID string) (*WebhookDelivery, error) {
	var out WebhookDelivery
	err := v.updatePending(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermWebhookUpdate)
		if err != nil {
			return err
		}
		hook, err := t.mustWebhook(p.TenantID, webhookID)
		if err != nil {
			return err
		}
		if hook.Status != WebhookEnabled {
			return unit.Errorf(Conflict, "the webhook is disabled: enable it first")
		}
		var rec events.Delivery
		tk := barrier.Tenant(p.TenantID)
		ok := false
		if unit.ValidID(deliveryID) {
			ok, err = t.GetRecord(tk.WebhookDelivery(webhookID, deliveryID), &rec)
		}
		if err != nil {
			return err
		}
		if !ok {
			return unit.NotFoundError("delivery")
		}
		if rec.Claim != "" && t.Now.Before(rec.ClaimedUntil) {
			return unit.Errorf(Conflict, "the delivery is being attempted")
		}
		if rec.Status != DeliveryPending {
			room := v.dispatch.PendingRoom
			if rec.EventType == EventWebhookTest {
				room = v.dispatch.TestRoom
			}
			if full, err := room(t.Tx, p.TenantID, webhookID); err != nil || full != "" {
				return cmp.Or(err, events.PendingCapError(full))
			}
		}
		if err := t.Delete(tk.WebhookDue(webhookID, rec.NextAttemptAt, rec.ID)); err != nil {
			return err
		}
		rec.Status, rec.Attempts, rec.NextAttemptAt, rec.Claim, rec.ClaimedUntil = DeliveryPending, 0, t.Now, "", time.Time{}
		if err := t.v.dispatch.PutDelivery(t.Tx, &rec); err != nil {
			return err
		}
		v.dispatch.WakeAfterCommit(t.Tx, events.Key{Tenant: p.TenantID, Webhook: webhookID})
		out = rec.API()
		return t.Log(p.Actor(), p.TenantID, EntityWebhook, webhookID, OpUpdate, "Webhook delivery queued again")
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// TestWebhook queues a webhook.test event to webhook webhookID only,
// whether or not it subscribes to webhook.test, and returns its
// delivery. The event's data is {"webhook": {id, name, url}, "actor"}.
// Requires webhook:update.
//
// Returns NotFound for an unknown webhook (or another tenant's),
// Conflict when it is disabled, Unauthenticated for a key that is
// missing, unknown or expired, RateLimited over a rate limit, at a cap
// of pending deliveries or with 10 test events pending to the webhook
// (internal/events' pending.go, with a RetryAfter),
// PermissionDenied without webhook:update, or Internal.
func (v *Vault) TestWebhook(ctx context.Context, key Credential, webhookID string) (*WebhookDelivery, error) {
	var out WebhookDelivery
	err := v.updatePending(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermWebhookUpdate)
		if err != nil {
			return err
		}
		hook, err := t.mustWebhook(p.TenantID, webhookID)
		if err != nil {
			return err
		}
		if hook.Status != WebhookEnabled {
			return unit.Errorf(Conflict, "the webhook is disabled: enable it first")
		}
		if full, err := v.dispatch.TestRoom(t.Tx, p.TenantID, hook.ID); err != nil || full != "" {
			return cmp.Or(err, events.PendingCapError(full))
		}
		who, err := t.eventActor(p.TenantID, p.Actor())
		if err != nil {
			return err
		}
		data, err := json.Marshal(map[string]any{"webhook": testWebhookView{hook.ID, hook.Name, hook.URL}, "actor": who})
		if err != nil {
			return err
		}
		info := WebhookEventInfo{ID: v.ids.Next(t.Now), Type: EventWebhookTest, Timestamp: t.Now, TenantID: p.TenantID,
			TraceID: unit.TraceID(t.Ctx), Data: data}
		b, err := json.Marshal(info)
		if err != nil {
			return err
		}
		rec, err := v.dispatch.QueueDelivery(t.Tx, p.TenantID, hook.ID, events.Outgoing{ID: info.ID, Type: info.Type, JSON: b})
		if err != nil {
			return err
		}
		out = rec.API()
		return t.Log(p.Actor(), p.TenantID, EntityWebhook, hook.ID, OpUpdate, "Webhook test event queued")
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// testWebhookView is the webhook as a webhook.test event names it.
type testWebhookView struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	URL  string `json:"url"`
}

// Delivery statuses (WebhookDelivery.Status).
const (
	DeliveryPending   = events.DeliveryPending
	DeliverySucceeded = events.DeliverySucceeded
	DeliveryFailed    = events.DeliveryFailed
)
