package events

import (
	"strconv"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Caps on pending deliveries. Every delivery is tried up to ten times
// over three and a half days, so without a bound a tenant (or a receiver
// that stops answering while the tenant keeps writing) could fill the
// store with deliveries. WebhookOptions.MaxPendingPerWebhook and
// MaxPendingPerTenant bound the deliveries pending (queued or waiting for
// a retry) to one webhook and to all of one tenant's webhooks; one
// tenant's count never touches another's.
//
// Counting: each pending delivery has an index entry,
// tenant/<tid>/idx/wh-p/<webhook>/<id>, written and removed with its
// record's status (PutDelivery), so the count is in the store and holds
// across instances and restarts. Counting it on every write would make a
// tokenize scan thousands of keys, so each instance keeps the counts of
// the webhooks it queues to, and in between adds what it queues and
// subtracts what it finishes. A count is taken again from the store when
// a webhook has none in this instance yet, every events.PendingRecount, and, at
// a cap, at most once per PollInterval (since other instances may have
// finished some); never in a write transaction: a commit that finds a
// count missing or stale goes on with what it has and, once committed,
// asks the dispatcher for it (pendingChange.recount), which counts in a
// read-only transaction of its own (recountPending). So a tokenize never reads the
// pending index, and on PostgreSQL never holds a predicate lock on it.
// The calls that ask for a delivery (TestWebhook, Redeliver) count a
// missing or stale count first, in a read-only transaction, and then run
// their write (Service.UpdatePending). The tenant's cap sums the counts of the
// tenant's webhooks as the subscription cache lists them
// (subscriptions_read.go). Concurrent writes, or several instances,
// may overshoot a cap by what they queue between two counts (and by what
// a webhook gets before its first count, which follows within a
// dispatcher pass): the caps bound storage, they are not quotas.
//
// At a cap (and for test events, at maxPendingTests per webhook):
//   - TestWebhook and RedeliverWebhookDelivery are refused (RateLimited,
//     429 over HTTP, with Retry-After): the caller asked for a delivery
//     and is told it was not queued.
//   - An event emitted by an ordinary write (a tokenize, an update) is
//     not queued to that webhook (the newest is dropped, the queue kept
//     as it is): the write itself succeeds as fast as ever, since a
//     receiver that is down must never fail or slow a payment flow.
//     The drop is not silent: each is counted (Metrics.EventDelivery with
//     EventDropped) and logged with the tenant and webhook, at most once
//     per webhook per events.PendingRecount with the number dropped since.
//     Webhooks are notifications: a consumer that missed events reads the
//     current state back from the API (or the audit log), as it must
//     after any outage of its own.

// maxPendingTests bounds the webhook.test deliveries pending to one
// webhook: a test event is a manual check, and a loop of them must not
// fill the webhook's queue (and its cap) with a day of retries. Counted
// from the store, in the test's own transaction (a short scan).
const maxPendingTests = 10

// pendingRetryAfter is the Retry-After of a request refused at a cap:
// the next recount (PendingRecount), by when deliveries may have
// gone out.
const pendingRetryAfter = PendingRecount

// pendingKey is the index entry of pending delivery did to webhook whid
// (empty value), and PendingOf the webhook's entries.
func pendingKey(tid, whid, did string) barrier.Key {
	return PendingOf(tid, whid).Key(did)
}

func PendingOf(tid, whid string) barrier.Prefix {
	return barrier.Tenant(tid).Index("wh-p").Sub(whid + "/")
}

// pendingTestKey is the second index entry of a pending webhook.test
// delivery, and pendingTestsOf the webhook's.
func pendingTestKey(tid, whid, did string) barrier.Key {
	return pendingTestsOf(tid, whid).Key(did)
}

func pendingTestsOf(tid, whid string) barrier.Prefix {
	return barrier.Tenant(tid).Index("wh-pt").Sub(whid + "/")
}

// TestRoom says why one more pending webhook.test delivery to webhook
// whid would go past maxPendingTests or a cap of pending deliveries, or
// "" when it fits.
func (d *Dispatcher) TestRoom(t *unit.Tx, tid, whid string) (string, error) {
	n := 0
	err := t.Scan(pendingTestsOf(tid, whid), "", maxPendingTests, func(barrier.Key, string) error {
		n++
		return nil
	})
	if err != nil {
		return "", err
	}
	if n >= maxPendingTests {
		return "the webhook has " + strconv.Itoa(n) + " test events pending, its most", nil
	}
	return d.PendingRoom(t, tid, whid)
}

// pendingChange is what a transaction did to the pending counts: the
// change of each webhook's count, and the events it dropped.
type pendingChange struct {
	d       *Dispatcher
	delta   map[Key]int
	dropped map[Key]int
	// recount are the webhooks whose count t found missing or stale: the
	// dispatcher is asked to count them once t has committed (and its
	// deltas are applied), so that its count includes t's deliveries
	// and none is added twice.
	recount map[Key]bool
}

// pendingChanges applies a committed transaction's pendingChange to the
// instance's counts, and reports its drops.
var pendingChanges = &unit.Local[pendingChange]{Finish: func(t *unit.Tx, c *pendingChange, committed bool) {
	if !committed {
		return
	}
	d := c.d
	counts := d.Pending()
	for k, d := range c.delta {
		counts.Add(k, d)
	}
	for k := range c.recount {
		if counts.Want(k) {
			d.Poke()
		}
	}
	for k, n := range c.dropped {
		if d.cfg.Dropped != nil {
			for range n {
				d.cfg.Dropped()
			}
		}
		if n := counts.Drop(k, n, t.Now); n > 0 {
			d.cfg.Logger.Warn("tokenvault: webhook events dropped: too many deliveries pending",
				"tenant", k.Tenant, "webhook", k.Webhook, "dropped", n)
		}
	}
}}

// changePending adds n to webhook k's count once t commits.
func (d *Dispatcher) changePending(t *unit.Tx, k Key, n int) {
	c := d.changes(t)
	if c.delta == nil {
		c.delta = map[Key]int{}
	}
	c.delta[k] += n
}

// stale reports whether a count of webhook k taken at counted (ok false:
// none) should be taken again at now, atCap telling whether it is at a
// cap.
func (d *Dispatcher) stale(t *unit.Tx, ok bool, counted time.Time, atCap bool) bool {
	return !ok || t.Now.Sub(counted) >= PendingRecount || atCap && t.Now.Sub(counted) >= d.cfg.Options.PollInterval
}

// pendingOf is webhook whid's pending deliveries as t sees them: the
// instance's count plus what t changed. When the count is missing or
// stale, t reads nothing: the dispatcher is asked to count it once t
// commits, and the count t has (none: zero) stands until then. In a
// transaction that asks for a delivery (UpdatePending), such a count is
// instead noted for UpdatePending to take before it runs t again.
func (d *Dispatcher) pendingOf(t *unit.Tx, tid, whid string, atCap func(int) bool) int {
	k := Key{Tenant: tid, Webhook: whid}
	mine := d.changes(t).delta[k]
	n, counted, ok := d.pending.Get(k)
	if d.stale(t, ok, counted, atCap(n+mine)) {
		if need := pendingNeeded.Of(t); need.strict {
			need.keys = append(need.keys, k)
		} else {
			c := d.changes(t)
			if c.recount == nil {
				c.recount = map[Key]bool{}
			}
			c.recount[k] = true
		}
	}
	return n + mine
}

// PendingRoom says why one more delivery to webhook whid of tenant tid
// would go past a cap, or "" when it fits. It reads no pending index
// entry (pendingOf), and the tenant's webhooks from the subscription
// cache (Config.Subscriptions).
func (d *Dispatcher) PendingRoom(t *unit.Tx, tid, whid string) (string, error) {
	o := d.cfg.Options
	n := d.pendingOf(t, tid, whid, func(n int) bool { return n >= o.MaxPendingPerWebhook })
	hooks, err := d.cfg.Subscriptions(t, tid)
	if err != nil {
		return "", err
	}
	total := 0
	for _, h := range hooks {
		total += d.pendingOf(t, tid, h.ID, func(int) bool { return false })
	}
	if need := pendingNeeded.Of(t); len(need.keys) > 0 {
		return "", ErrPendingUncounted
	}
	if n >= o.MaxPendingPerWebhook {
		return "the webhook has " + strconv.Itoa(n) + " deliveries pending, its most", nil
	}
	if total >= o.MaxPendingPerTenant {
		return "the tenant's webhooks have " + strconv.Itoa(total) + " deliveries pending, their most", nil
	}
	return "", nil
}

// PendingCapError refuses a delivery asked for at a cap (RateLimited,
// with a RetryAfter), why saying which cap.
func PendingCapError(why string) error {
	return &unit.Error{Kind: unit.RateLimited, Message: why + ": try again once some are delivered or given up",
		RetryAfter: pendingRetryAfter}
}

// markPending keeps rec's pending index entry in step with its status,
// and the instance's count with it once t commits. known says whether
// the entry exists; markPending reads it when unknown (nil). A new
// delivery, whose id is new, has none: queueing it reads nothing.
func (d *Dispatcher) markPending(t *unit.Tx, rec *Delivery, known *bool) error {
	key := pendingKey(rec.TenantID, rec.WebhookID, rec.ID)
	var has bool
	if known != nil {
		has = *known
	} else {
		var err error
		if has, err = t.Has(key); err != nil {
			return err
		}
	}
	if rec.EventType == WebhookTest {
		if err := markPendingTest(t, rec); err != nil {
			return err
		}
	}
	k := Key{Tenant: rec.TenantID, Webhook: rec.WebhookID}
	switch pending := rec.Status == DeliveryPending; {
	case pending && !has:
		d.changePending(t, k, 1)
		return t.PutIndex(key)
	case !pending && has:
		d.changePending(t, k, -1)
		return t.Delete(key)
	}
	return nil
}

// markPendingTest keeps the second index entry of a webhook.test
// delivery in step with its status.
func markPendingTest(t *unit.Tx, rec *Delivery) error {
	key := pendingTestKey(rec.TenantID, rec.WebhookID, rec.ID)
	if rec.Status == DeliveryPending {
		return t.PutIndex(key)
	}
	return t.Delete(key)
}

// DeleteDelivery removes delivery did of webhook whid of tenant tid and
// its pending index entry (not its queue entry).
func (d *Dispatcher) DeleteDelivery(t *unit.Tx, tid, whid, did string) error {
	key := pendingKey(tid, whid, did)
	has, err := t.Has(key)
	if err != nil {
		return err
	}
	if has {
		d.changePending(t, Key{Tenant: tid, Webhook: whid}, -1)
		if err := t.Delete(key); err != nil {
			return err
		}
	}
	if err := t.Delete(pendingTestKey(tid, whid, did)); err != nil {
		return err
	}
	return t.Delete(barrier.Tenant(tid).WebhookDelivery(whid, did))
}

// changes is t's pendingChange, made (and bound to d) on first use.
func (d *Dispatcher) changes(t *unit.Tx) *pendingChange {
	c := pendingChanges.Of(t)
	c.d = d
	return c
}
