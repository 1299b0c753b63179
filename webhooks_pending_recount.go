package tokenvault

import (
	"context"
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/internal/events"
)

// Counting pending deliveries outside the write transactions
// (internal/events' pending.go says why and when a count is taken), for
// the calls that ask for a delivery.

// updatePending is update for a call that asks for a delivery and is
// refused at a cap (TestWebhook, RedeliverWebhookDelivery), which must
// decide on a count rather than let the event through: when fn's
// pendingRoom finds a count missing or stale, the transaction ends
// without writing, the counts are taken in a read-only transaction
// (events.Dispatcher.CountPending), and fn runs again. A third run that still finds a count
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
		if err := v.dispatch.CountPending(ctx, slices.Compact(need)); err != nil {
			return v.result(err)
		}
	}
}
