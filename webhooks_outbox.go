package tokenvault

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
)

// The outbox. An event is queued in the transaction that makes the change
// it tells of: per target webhook, a delivery record (pending, holding the
// event's JSON), its entry in the delivery queue, due at once, and its
// pending index entry, all keyed by the new delivery's id: the commit
// writes no row another commit writes, and reads none of them (the
// targets come from the subscription cache, the caps from the instance's
// counts: webhooks_subscriptions.go, webhooks_pending.go). Both
// land with the change or not at all, so an acknowledged change always
// has its deliveries and a rolled-back one never has. The dispatcher
// (webhooks_dispatch.go) is woken once the transaction commits; other
// instances sharing the store find the entries at their next poll.
//
// Every delivery record has exactly one queue entry, at
// sys/whq/<tid>/<webhook>/<NextAttemptAt>/<id>: while it is pending, when
// it is next due (or, while an instance attempts it, when that claim
// expires); once it has finished, when it is removed (DeliveryRetention).

// queueWebhookEvent writes, in t's transaction, one delivery of ev for
// each of targets and its entry in the delivery queue, and has the
// dispatcher woken once t commits. A target at a cap of pending
// deliveries gets none: the event is dropped for it, counted and logged
// (webhooks_pending.go), and t goes on.
func (t *txn) queueWebhookEvent(tid string, ev events.Outgoing, targets []*events.Webhook) error {
	for _, h := range targets {
		full, err := t.pendingRoom(tid, h.ID)
		if err != nil {
			return err
		}
		if full != "" {
			c := pendingChanges.of(t)
			if c.dropped == nil {
				c.dropped = map[events.Key]int{}
			}
			c.dropped[events.Key{Tenant: tid, Webhook: h.ID}]++
			continue
		}
		if _, err := t.queueDelivery(tid, h.ID, ev); err != nil {
			return err
		}
	}
	return nil
}

// queueDelivery writes one pending delivery of ev to webhook whid, due
// now, and its queue entry.
func (t *txn) queueDelivery(tid, whid string, ev events.Outgoing) (*events.Delivery, error) {
	rec := &events.Delivery{ID: t.v.ids.Next(t.Now), TenantID: tid, WebhookID: whid, EventID: ev.ID,
		EventType: ev.Type, Event: ev.JSON, CreatedAt: t.Now, Status: DeliveryPending, NextAttemptAt: t.Now}
	if err := t.writeDelivery(rec, new(bool)); err != nil {
		return nil, err
	}
	t.wakeDispatcher(tid, whid)
	return rec, nil
}

// putDelivery writes rec, its queue entry at rec.NextAttemptAt, and its
// pending index entry while it is pending (markPending).
func (t *txn) putDelivery(rec *events.Delivery) error { return t.writeDelivery(rec, nil) }

// writeDelivery is putDelivery, told whether rec's pending index entry
// exists (nil: unknown, read it). queueDelivery's delivery is new: it
// writes three keys of its own and reads none.
func (t *txn) writeDelivery(rec *events.Delivery, hasPending *bool) error {
	tk := barrier.Tenant(rec.TenantID)
	if err := t.markPending(rec, hasPending); err != nil {
		return err
	}
	if err := t.PutRecord(tk.WebhookDelivery(rec.WebhookID, rec.ID), rec); err != nil {
		return err
	}
	return t.PutIndex(tk.WebhookDue(rec.WebhookID, rec.NextAttemptAt, rec.ID))
}

// wakeDispatcher has the dispatcher look at webhook whid of tenant tid
// once t commits (once per webhook, however many deliveries t queued).
func (t *txn) wakeDispatcher(tid, whid string) {
	woken := deliveriesQueued.of(t)
	if *woken == nil {
		*woken = map[events.Key]bool{}
	}
	k := events.Key{Tenant: tid, Webhook: whid}
	if !(*woken)[k] {
		(*woken)[k] = true
		t.AfterCommit(func() { t.v.dispatch.WakeFor(k) })
	}
}

// deliveriesQueued records the webhooks a transaction queued deliveries to.
var deliveriesQueued = &txnLocal[map[events.Key]bool]{}
