package events

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Counting pending deliveries outside the write transactions
// (pending.go says why and when a count is taken).

// PendingNeed is the state of a transaction that asks for a delivery
// (Service.UpdatePending: SendTest, Redeliver):
// whether it is strict, and the webhooks whose count it found missing or
// stale.
type PendingNeed struct {
	strict bool
	keys   []Key
}

var pendingNeeded = &unit.Local[PendingNeed]{}

// NeedCounts makes t a transaction that asks for a delivery. Strict, a
// PendingRoom that finds a count missing or stale ends t with
// ErrPendingUncounted, and Keys names the webhooks to count (CountPending)
// before t's function runs again; not strict, it goes on with the counts
// it has, as an ordinary write does.
func NeedCounts(t *unit.Tx, strict bool) *PendingNeed {
	n := pendingNeeded.Of(t)
	n.strict, n.keys = strict, nil
	return n
}

// Keys are the webhooks whose count the transaction found missing or
// stale.
func (n *PendingNeed) Keys() []Key { return n.keys }

// ErrPendingUncounted ends a strict transaction (NeedCounts) that needs
// counts first: it is a *unit.Error (so the Vault passes it on as it is,
// unlogged), and never leaves Service.UpdatePending.
var ErrPendingUncounted = &unit.Error{Kind: unit.Conflict, Message: "pending deliveries not counted yet"}

// recountPending takes the counts commits asked for (PendingCounts.Want):
// run by the dispatcher on every wake, in a read-only transaction.
func (d *Dispatcher) recountPending(ctx context.Context) {
	keys := d.pending.TakeWanted()
	if len(keys) == 0 {
		return
	}
	if err := d.CountPending(ctx, keys); err != nil && ctx.Err() == nil {
		d.cfg.Logger.Warn("tokenvault: counting pending webhook deliveries", "err", err)
	}
}

// CountPending counts the pending index entries of each webhook of keys
// in one read-only transaction, and keeps the counts as of its time.
func (d *Dispatcher) CountPending(ctx context.Context, keys []Key) error {
	var counts []int
	var at = d.cfg.Now()
	err := d.cfg.Work.View(ctx, func(t *unit.Tx) error {
		at = t.Now
		var err error
		counts, err = d.countIn(t, keys)
		return err
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		d.pending.Set(k, counts[i], at)
	}
	return nil
}

// countIn counts the pending index entries of each webhook of keys in t:
// up to one more than the larger cap, since past it the number does not
// matter.
func (d *Dispatcher) countIn(t *unit.Tx, keys []Key) ([]int, error) {
	o := d.cfg.Options
	limit := max(o.MaxPendingPerWebhook, o.MaxPendingPerTenant) + 1
	counts := make([]int, len(keys))
	for i, k := range keys {
		n := 0
		err := t.Scan(PendingOf(k.Tenant, k.Webhook), "", limit, func(barrier.Key, string) error {
			n++
			return nil
		})
		if err != nil {
			return nil, err
		}
		counts[i] = n
	}
	return counts, nil
}
