package events

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The outbox. An event is queued in the transaction that makes the change
// it tells of: per target webhook, a delivery record (pending, holding the
// event's JSON), its entry in the delivery queue, due at once, and its
// pending index entry, all keyed by the new delivery's id: the commit
// writes no row another commit writes, and reads none of them (the
// targets come from the subscription cache, the caps from the instance's
// counts: subscriptions_read.go, pending.go). Both
// land with the change or not at all, so an acknowledged change always
// has its deliveries and a rolled-back one never has. The dispatcher
// (dispatch.go) is woken once the transaction commits; other
// instances sharing the store find the entries at their next poll.
//
// Every delivery record has exactly one queue entry, at
// sys/whq/<tid>/<webhook>/<NextAttemptAt>/<id>: while it is pending, when
// it is next due (or, while an instance attempts it, when that claim
// expires); once it has finished, when it is removed (DeliveryRetention).

// QueueEvent writes, in t's transaction, one delivery of ev for
// each of targets and its entry in the delivery queue, and has the
// dispatcher woken once t commits. A target at a cap of pending
// deliveries gets none: the event is dropped for it, counted and logged
// (pending.go), and t goes on.
func (d *Dispatcher) QueueEvent(t *unit.Tx, tid string, ev Outgoing, targets []*Webhook) error {
	for _, h := range targets {
		full, err := d.PendingRoom(t, tid, h.ID)
		if err != nil {
			return err
		}
		if full != "" {
			c := d.changes(t)
			if c.dropped == nil {
				c.dropped = map[Key]int{}
			}
			c.dropped[Key{Tenant: tid, Webhook: h.ID}]++
			continue
		}
		if _, err := d.QueueDelivery(t, tid, h.ID, ev); err != nil {
			return err
		}
	}
	return nil
}

// QueueDelivery writes one pending delivery of ev to webhook whid, due
// now, and its queue entry.
func (d *Dispatcher) QueueDelivery(t *unit.Tx, tid, whid string, ev Outgoing) (*Delivery, error) {
	rec := &Delivery{ID: d.cfg.IDs.Next(t.Now), TenantID: tid, WebhookID: whid, EventID: ev.ID,
		EventType: ev.Type, Event: ev.JSON, CreatedAt: t.Now, Status: DeliveryPending, NextAttemptAt: t.Now}
	if err := d.writeDelivery(t, rec, new(bool)); err != nil {
		return nil, err
	}
	d.WakeAfterCommit(t, Key{Tenant: tid, Webhook: whid})
	return rec, nil
}

// PutDelivery writes rec, its queue entry at rec.NextAttemptAt, and its
// pending index entry while it is pending (markPending).
func (d *Dispatcher) PutDelivery(t *unit.Tx, rec *Delivery) error {
	return d.writeDelivery(t, rec, nil)
}

// writeDelivery is PutDelivery, told whether rec's pending index entry
// exists (nil: unknown, read it). QueueDelivery's delivery is new: it
// writes three keys of its own and reads none.
func (d *Dispatcher) writeDelivery(t *unit.Tx, rec *Delivery, hasPending *bool) error {
	tk := barrier.Tenant(rec.TenantID)
	if err := d.markPending(t, rec, hasPending); err != nil {
		return err
	}
	if err := t.PutRecord(tk.WebhookDelivery(rec.WebhookID, rec.ID), rec); err != nil {
		return err
	}
	return t.PutIndex(tk.WebhookDue(rec.WebhookID, rec.NextAttemptAt, rec.ID))
}

// WakeAfterCommit has the dispatcher look at webhook k once t commits (once per webhook, however many deliveries t queued).
func (d *Dispatcher) WakeAfterCommit(t *unit.Tx, k Key) {
	woken := deliveriesQueued.Of(t)
	if *woken == nil {
		*woken = map[Key]bool{}
	}
	if !(*woken)[k] {
		(*woken)[k] = true
		t.AfterCommit(func() { d.WakeFor(k) })
	}
}

// deliveriesQueued records the webhooks a transaction queued deliveries to.
var deliveriesQueued = &unit.Local[map[Key]bool]{}
