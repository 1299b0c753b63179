package events

import (
	"cmp"
	"encoding/json"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The deliveries of a webhook, as its owner sees them: recent attempts,
// a redelivery, and a test event. The Vault's methods authorize the
// caller (webhook:read, webhook:update) and call these in their unit of
// work; Redeliver and SendTest run under UpdatePending, since they are
// refused at a cap of pending deliveries.

// MaxDeliveriesPageSize bounds a page of a webhook's deliveries.
const MaxDeliveriesPageSize = 100

// DeliveriesPage resolves req for a list of deliveries, which is paged by
// cursor only: Page may be 0 or 1, Start only a cursor the list returned.
// It returns Invalid (naming the field) otherwise.
func DeliveriesPage(req paging.Request) (paging.Pager, error) {
	pg, err := req.Resolve(MaxDeliveriesPageSize)
	if err != nil {
		return pg, err
	}
	if pg.Page > 1 {
		return pg, unit.InvalidField("page", "deliveries are paged by cursor: pass pagination.after as start")
	}
	if pg.Start != "" && !unit.ValidID(pg.Start) {
		return pg, unit.InvalidField("start", "is not a cursor returned by this list (pagination.after)")
	}
	return pg, nil
}

// Deliveries lists the deliveries of webhook webhookID of tenant tid,
// newest first, the page pg (DeliveriesPage) after its cursor. The
// pagination's TotalItems counts this page and, when more follow, one
// more: a lower bound. It returns NotFound for a webhook that is not the
// tenant's.
func Deliveries(t *unit.Tx, tid, webhookID string, pg paging.Pager) (*paging.Page[DeliveryInfo], error) {
	if _, err := Get(t, tid, webhookID); err != nil {
		return nil, err
	}
	vals, err := t.ScanValuesBack(barrier.Tenant(tid).WebhookDeliveries(webhookID), pg.Start, pg.Size+1)
	if err != nil {
		return nil, err
	}
	more := len(vals) > pg.Size
	if more {
		vals = vals[:pg.Size]
	}
	out := &paging.Page[DeliveryInfo]{Data: []DeliveryInfo{}}
	for _, sv := range vals {
		var rec Delivery
		if err := t.OpenRecord(sv.Key, sv.Raw, &rec); err != nil {
			return nil, err
		}
		out.Data = append(out.Data, rec.API())
	}
	out.Pagination = paging.Pagination{TotalItems: len(out.Data), PageNumber: 1, PageSize: pg.Size, TotalPages: 1}
	if more {
		out.Pagination.TotalItems++
		out.Pagination.TotalPages = 2
		out.Pagination.After = paging.EncodeCursor(out.Data[len(out.Data)-1].ID)
	}
	return out, nil
}

// Redeliver queues delivery deliveryID of webhook webhookID of p's
// tenant again, due now: pending, its attempts counted from zero, the
// same event as before. It returns NotFound for an unknown webhook or
// delivery, Conflict when the webhook is disabled or the delivery is
// being attempted, and RateLimited when a finished delivery would go past
// a cap of pending deliveries (pending.go).
func (s *Service) Redeliver(t *unit.Tx, p *access.Principal, webhookID, deliveryID string) (*DeliveryInfo, error) {
	hook, err := Get(t, p.TenantID, webhookID)
	if err != nil {
		return nil, err
	}
	if hook.Status != Enabled {
		return nil, unit.Errorf(unit.Conflict, "the webhook is disabled: enable it first")
	}
	var rec Delivery
	tk := barrier.Tenant(p.TenantID)
	ok := false
	if unit.ValidID(deliveryID) {
		ok, err = t.GetRecord(tk.WebhookDelivery(webhookID, deliveryID), &rec)
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, unit.NotFoundError("delivery")
	}
	if rec.Claim != "" && t.Now.Before(rec.ClaimedUntil) {
		return nil, unit.Errorf(unit.Conflict, "the delivery is being attempted")
	}
	d := s.Dispatch
	if rec.Status != DeliveryPending {
		room := d.PendingRoom
		if rec.EventType == WebhookTest {
			room = d.TestRoom
		}
		if full, err := room(t, p.TenantID, webhookID); err != nil || full != "" {
			return nil, cmp.Or(err, PendingCapError(full))
		}
	}
	if err := t.Delete(tk.WebhookDue(webhookID, rec.NextAttemptAt, rec.ID)); err != nil {
		return nil, err
	}
	rec.Status, rec.Attempts, rec.NextAttemptAt, rec.Claim, rec.ClaimedUntil = DeliveryPending, 0, t.Now, "", time.Time{}
	if err := d.PutDelivery(t, &rec); err != nil {
		return nil, err
	}
	d.WakeAfterCommit(t, Key{Tenant: p.TenantID, Webhook: webhookID})
	out := rec.API()
	return &out, t.Log(p.Actor(), p.TenantID, unit.EntityWebhook, webhookID, unit.OpUpdate, "Webhook delivery queued again")
}

// SendTest queues a webhook.test event to webhook webhookID of p's
// tenant only, whether or not it subscribes to webhook.test, and returns
// its delivery. The event's data is {"webhook": {id, name, url},
// "actor"}. It returns NotFound for an unknown webhook, Conflict when it
// is disabled, and RateLimited at a cap of pending deliveries or with
// too many test events pending to it (pending.go).
func (s *Service) SendTest(t *unit.Tx, p *access.Principal, webhookID string) (*DeliveryInfo, error) {
	hook, err := Get(t, p.TenantID, webhookID)
	if err != nil {
		return nil, err
	}
	if hook.Status != Enabled {
		return nil, unit.Errorf(unit.Conflict, "the webhook is disabled: enable it first")
	}
	d := s.Dispatch
	if full, err := d.TestRoom(t, p.TenantID, hook.ID); err != nil || full != "" {
		return nil, cmp.Or(err, PendingCapError(full))
	}
	who, err := EventActor(t, p.TenantID, p.Actor())
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(map[string]any{"webhook": testWebhookView{hook.ID, hook.Name, hook.URL}, "actor": who})
	if err != nil {
		return nil, err
	}
	info := Info{ID: s.IDs.Next(t.Now), Type: WebhookTest, Timestamp: t.Now, TenantID: p.TenantID,
		TraceID: unit.TraceID(t.Ctx), Data: data}
	b, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	rec, err := d.QueueDelivery(t, p.TenantID, hook.ID, Outgoing{ID: info.ID, Type: info.Type, JSON: b})
	if err != nil {
		return nil, err
	}
	out := rec.API()
	return &out, t.Log(p.Actor(), p.TenantID, unit.EntityWebhook, hook.ID, unit.OpUpdate, "Webhook test event queued")
}

// testWebhookView is the webhook as a webhook.test event names it.
type testWebhookView struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	URL  string `json:"url"`
}
