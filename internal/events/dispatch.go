package events

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store"
)

// The dispatcher: one goroutine per Vault (Run, started by the Vault's
// Open under a context its Close cancels) that finds due deliveries, claims them, and hands
// each to an attempt goroutine, bounded per webhook
// (WebhookOptions.ConcurrencyPerWebhook) and per tenant
// (ConcurrencyPerTenant) in this instance, so a slow or dead receiver
// holds only its own slots: never a request goroutine, never a sandbox
// worker.
//
// Finding: the queue is sys/whq/<tid>/<webhook>/<due>/<id>, so the
// dispatcher skip-scans it, one seek per webhook with entries: the first
// entry of the first webhook, then past that webhook's entries to the
// next. One webhook's backlog never hides another's.
//
// Claiming: in a write transaction, the due entry is moved to
// now+Lease and the delivery record marked with a fresh claim. Instances
// sharing a PostgreSQL store run writes at SERIALIZABLE: when two claim
// one delivery, one transaction fails and runs again, finds the entry
// gone, and leaves it. A claim whose instance died (kill -9) expires
// after Lease, when the entry comes due again and any instance retries
// it; an outcome is recorded only under the claim it was attempted with.

// Run delivers until ctx ends (the Vault closes), then waits for the
// attempts in flight (their context is ctx: they end at once). Every
// PollInterval it looks at the whole queue (retries come due, other
// instances write); in between, woken by a commit or a finished attempt,
// it looks only at the webhooks that woke it, so a busy instance does
// not scan every webhook's queue after every commit.
func (d *Dispatcher) Run(ctx context.Context) {
	d.bg = ctx
	defer d.Wait()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		full := false
		select {
		case <-ctx.Done():
			return
		case <-d.Woken():
		case <-timer.C:
			full = true
		}
		d.recountPending(ctx)
		hot := d.TakeHot()
		if full {
			hot = nil
		}
		if err := d.dispatchOnce(ctx, full, hot); err != nil && ctx.Err() == nil {
			d.cfg.Logger.Warn("tokenvault: webhook dispatcher", "err", err)
		}
		if full {
			timer.Reset(d.cfg.Options.PollInterval)
		}
	}
}

// hookQueue is what one pass found of one webhook's queue.
type hookQueue struct {
	tid, whid string
	due       []dueEntry
	// gone: the webhook, or its tenant, no longer exists.
	gone bool
}

// dueEntry is one queue entry: its key's due time and delivery id.
type dueEntry struct {
	at  time.Time
	did string
}

// dispatchBatch bounds the entries one pass reads of one webhook, and
// the records one transaction prunes.
const dispatchBatch = 100

// dispatchOnce is one pass: find the due entries of every webhook (full)
// or of the webhooks in hot, then claim and start what the slots allow.
func (d *Dispatcher) dispatchOnce(ctx context.Context, full bool, hot []Key) error {
	if !full && len(hot) == 0 {
		return nil
	}
	now := d.cfg.Now()
	var queues []hookQueue
	err := d.cfg.Work.View(ctx, func(t *unit.Tx) error {
		queues = nil
		add := func(k Key) error {
			q, err := d.hookQueueOf(t, k, now)
			if err == nil && (len(q.due) > 0 || q.gone) {
				queues = append(queues, q)
			}
			return err
		}
		if !full {
			for _, k := range hot {
				if err := add(k); err != nil {
					return err
				}
			}
			return nil
		}
		after := ""
		for {
			var first string
			err := t.Scan(barrier.WebhookQueue, after, 1, func(_ barrier.Key, rest string) error {
				first = rest
				return nil
			})
			if err != nil || first == "" {
				return err
			}
			parts := strings.SplitN(first, "/", 3)
			if len(parts) != 3 {
				return errors.New("tokenvault: malformed webhook queue entry")
			}
			if err := add(Key{Tenant: parts[0], Webhook: parts[1]}); err != nil {
				return err
			}
			after = parts[0] + "/" + parts[1] + "/\xff"
		}
	})
	if err != nil {
		return err
	}
	for _, q := range queues {
		if ctx.Err() != nil {
			return nil
		}
		if err := d.dispatchHook(ctx, q); err != nil && ctx.Err() == nil {
			d.cfg.Logger.Warn("tokenvault: webhook dispatcher", "webhook", q.whid, "err", err)
		}
	}
	return nil
}

// hookQueueOf reads webhook k's due entries (up to dispatchBatch, as of
// now) and whether the webhook, or its tenant, is gone.
func (d *Dispatcher) hookQueueOf(t *unit.Tx, k Key, now time.Time) (hookQueue, error) {
	q := hookQueue{tid: k.Tenant, whid: k.Webhook}
	tk := barrier.Tenant(q.tid)
	err := t.Scan(tk.WebhookDueOf(q.whid), "", dispatchBatch, func(_ barrier.Key, rest string) error {
		at, did, ok := ParseDue(rest)
		if ok && at.After(now) {
			return store.ErrStop // the rest is later
		}
		if ok {
			q.due = append(q.due, dueEntry{at, did})
		}
		return nil
	})
	if err != nil {
		return q, err
	}
	has, err := t.Has(tk.Record(unit.EntityWebhook, q.whid))
	if err != nil && !d.gone(err) {
		return q, err
	}
	q.gone = !has
	return q, nil
}

// job is one claimed delivery, for an attempt.
type job struct {
	rec  Delivery
	hook Webhook
}

// dispatchHook handles one webhook's due entries: drops them when its
// tenant or the webhook is gone (pruning a deleted webhook's deliveries),
// fails the pending ones of a disabled webhook, prunes finished
// deliveries whose retention passed, and claims the others as its free
// slots allow.
func (d *Dispatcher) dispatchHook(ctx context.Context, q hookQueue) error {
	hk := Key{Tenant: q.tid, Webhook: q.whid}
	slots := d.Reserve(hk, len(q.due))
	if slots == 0 && !q.gone {
		return nil // its slots are busy: a finished attempt wakes the dispatcher
	}
	// Only as many entries as there are slots: the rest wait for the
	// next pass, which a finished attempt starts.
	q.due = q.due[:slots]
	var jobs []job
	err := d.cfg.Work.Update(ctx, func(t *unit.Tx) error {
		jobs = nil
		tk := barrier.Tenant(q.tid)
		var hook Webhook
		ok, err := t.GetRecord(tk.Record(unit.EntityWebhook, q.whid), &hook)
		if d.gone(err) || err == nil && !ok {
			// Its pending deliveries are gone with it: no longer counted.
			t.AfterCommit(func() { d.pending.Forget(hk) })
		}
		if d.gone(err) {
			return dropQueue(t, q.tid, q.whid)
		}
		if err != nil {
			return err
		}
		if !ok {
			return d.pruneDeliveries(t, q.tid, q.whid)
		}
		claims := 0
		for _, e := range q.due {
			entry := tk.WebhookDue(q.whid, e.at, e.did)
			if has, err := t.Has(entry); err != nil || !has {
				if err != nil {
					return err
				}
				continue // another instance took it
			}
			var rec Delivery
			ok, err := t.GetRecord(tk.WebhookDelivery(q.whid, e.did), &rec)
			if err != nil {
				return err
			}
			if !ok || rec.Status != DeliveryPending {
				// Finished and past its retention (or an entry without
				// its record): removed.
				if err := t.Delete(entry); err != nil {
					return err
				}
				if ok {
					if err := d.DeleteDelivery(t, q.tid, q.whid, e.did); err != nil {
						return err
					}
				}
				continue
			}
			if err := t.Delete(entry); err != nil {
				return err
			}
			if hook.Status != Enabled {
				rec.Status, rec.Error, rec.Claim, rec.ClaimedUntil = DeliveryFailed, "the webhook is disabled", "", time.Time{}
				rec.NextAttemptAt = t.Now.Add(d.cfg.Options.DeliveryRetention)
				if err := d.PutDelivery(t, &rec); err != nil {
					return err
				}
				continue
			}
			if claims >= slots {
				// Put the entry back as it was: no slot is free.
				if err := t.PutIndex(entry); err != nil {
					return err
				}
				continue
			}
			claims++
			rec.Claim = NewClaim()
			rec.ClaimedUntil = t.Now.Add(d.cfg.Options.Lease)
			rec.NextAttemptAt = rec.ClaimedUntil
			if err := d.PutDelivery(t, &rec); err != nil {
				return err
			}
			jobs = append(jobs, job{rec: rec, hook: hook})
		}
		return nil
	})
	if err != nil {
		jobs = nil
	}
	d.Release(hk, slots-len(jobs))
	for _, j := range jobs {
		d.Go(hk, func() { d.attemptDelivery(j) })
	}
	return err
}

// pruneDeliveries removes up to dispatchBatch deliveries of the deleted
// webhook whid, with their queue entries; the next pass removes more.
func (d *Dispatcher) pruneDeliveries(t *unit.Tx, tid, whid string) error {
	tk := barrier.Tenant(tid)
	vals, err := t.ScanValuesAfter(tk.WebhookDeliveries(whid), "", dispatchBatch)
	if err != nil {
		return err
	}
	for _, sv := range vals {
		var rec Delivery
		if err := t.OpenRecord(sv.Key, sv.Raw, &rec); err != nil {
			return err
		}
		if err := t.Delete(tk.WebhookDue(whid, rec.NextAttemptAt, rec.ID)); err != nil {
			return err
		}
		if err := d.DeleteDelivery(t, tid, whid, rec.ID); err != nil {
			return err
		}
	}
	// Entries whose record is gone (none are written so, but a store
	// is not trusted to be consistent): removed in due order.
	if len(vals) == 0 {
		return dropQueue(t, tid, whid)
	}
	return nil
}

// dropQueue removes up to dispatchBatch queue entries of webhook whid of
// tenant tid, without reading their records: the tenant is gone, or they
// have none.
func dropQueue(t *unit.Tx, tid, whid string) error {
	var keys []barrier.Key
	err := t.Scan(barrier.Tenant(tid).WebhookDueOf(whid), "", dispatchBatch, func(k barrier.Key, _ string) error {
		keys = append(keys, k)
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := t.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
