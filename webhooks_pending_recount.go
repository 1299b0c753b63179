package tokenvault

import (
	"context"
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
)

// Counting pending deliveries outside the write transactions
// (webhooks_pending.go says why and when a count is taken).

// recountPending takes the counts commits asked for (events.PendingCounts.Want):
// run by the dispatcher on every wake, in a read-only transaction.
func (v *Vault) recountPending(ctx context.Context) {
	keys := v.dispatch.Pending().TakeWanted()
	if len(keys) == 0 {
		return
	}
	if err := v.countPending(ctx, keys); err != nil && ctx.Err() == nil {
		v.logger.Warn("tokenvault: counting pending webhook deliveries", "err", err)
	}
}

// countPending counts the pending index entries of each webhook of keys
// (up to one more than the larger cap: past it the number does not
// matter), in one read-only transaction, and keeps the counts as of its
// time.
func (v *Vault) countPending(ctx context.Context, keys []events.Key) error {
	o := v.webhooks
	limit := max(o.MaxPendingPerWebhook, o.MaxPendingPerTenant) + 1
	counts := make([]int, len(keys))
	var at = v.now()
	err := v.view(ctx, func(t *txn) error {
		at = t.Now
		for i, k := range keys {
			n := 0
			err := t.Scan(webhookPendingOf(k.Tenant, k.Webhook), "", limit, func(barrier.Key, string) error {
				n++
				return nil
			})
			if err != nil {
				return err
			}
			counts[i] = n
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		v.dispatch.Pending().Set(k, counts[i], at)
	}
	return nil
}

// pendingNeed is the state of a transaction that asks for a delivery
// (updatePending): strict, and the webhooks whose count it found missing
// or stale.
type pendingNeed struct {
	strict bool
	keys   []events.Key
}

var pendingNeeded = &txnLocal[pendingNeed]{}

// errPendingUncounted ends a transaction of updatePending that needs
// counts first: it is an *Error (so Vault.result passes it on as it is,
// unlogged), and never leaves updatePending.
var errPendingUncounted = &Error{Kind: Conflict, Message: "pending deliveries not counted yet"}

// updatePending is update for a call that asks for a delivery and is
// refused at a cap (TestWebhook, RedeliverWebhookDelivery), which must
// decide on a count rather than let the event through: when fn's
// pendingRoom finds a count missing or stale, the transaction ends
// without writing, the counts are taken in a read-only transaction
// (countPending), and fn runs again. A third run that still finds a count
// stale (a clock that moved a minute meanwhile) goes on with the counts
// it has, as an ordinary write does.
func (v *Vault) updatePending(ctx context.Context, fn func(*txn) error) error {
	for try := 0; ; try++ {
		var need []events.Key
		err := v.update(ctx, func(t *txn) error {
			n := pendingNeeded.of(t)
			n.strict, n.keys = try < 2, nil
			err := fn(t)
			need = n.keys
			return err
		})
		if err != errPendingUncounted {
			return err
		}
		slices.SortFunc(need, func(a, b events.Key) int {
			if a.Tenant != b.Tenant {
				return strings.Compare(a.Tenant, b.Tenant)
			}
			return strings.Compare(a.Webhook, b.Webhook)
		})
		if err := v.countPending(ctx, slices.Compact(need)); err != nil {
			return v.result(err)
		}
	}
}
