package tokenvault

import (
	"context"
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/internal/events"
)

// Counting pending deliveries outside the write transactions
// (internal/events' pending.go says why and when a count is taken).

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
// (events.Dispatcher.CountPending) in one read-only transaction, and
// keeps the counts as of its time.
func (v *Vault) countPending(ctx context.Context, keys []events.Key) error {
	var counts []int
	var at = v.now()
	err := v.view(ctx, func(t *txn) error {
		at = t.Now
		var err error
		counts, err = v.dispatch.CountPending(t.Tx, keys)
		return err
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		v.dispatch.Pending().Set(k, counts[i], at)
	}
	return nil
}

// updatePending is update for a call that asks for a delivery and is
// refused at a cap (TestWebhook, RedeliverWebhookDelivery), which must
// decide on a count rather than let the event through: when fn's
// pendingRoom finds a count missing or stale, the transaction ends
// without writing, the counts are taken in a read-only transaction
// (countPending), and fn runs again. A third run that still finds a count
// stale (a clock that moved a minute meanwhile) goes on with the counts
// it has, as an ordinary write does (events.NeedCounts).
func (v *Vault) updatePending(ctx context.Context, fn func(*txn) error) error {
	for try := 0; ; try++ {
		var need []events.Key
		err := v.update(ctx, func(t *txn) error {
			n := events.NeedCounts(t.Tx, try < 2)
			err := fn(t)
			need = n.Keys()
			return err
		})
		if err != events.ErrPendingUncounted {
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
