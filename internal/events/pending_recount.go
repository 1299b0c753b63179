package events

import (
	"context"
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// Counting pending deliveries outside the write units of work (pending.go
// says why and when a count is taken), for the calls that ask for a
// delivery.

// UpdatePending runs fn in a unit of work of the Dispatcher's Work, for a
// call that asks for a delivery and is refused at a cap (SendTest,
// Redeliver), which must decide on a count rather than let the event
// through: when fn's PendingRoom or TestRoom finds a count missing or
// stale, the unit of work ends without writing, the counts are taken in a
// read-only one (Dispatcher.CountPending), and fn runs again. A third run
// that still finds a count stale (a clock that moved a minute meanwhile)
// goes on with the counts it has, as an ordinary write does (NeedCounts).
func (s *Service) UpdatePending(ctx context.Context, fn func(*unit.Tx) error) error {
	for try := 0; ; try++ {
		var need []Key
		err := s.Dispatch.cfg.Work.Update(ctx, func(t *unit.Tx) error {
			n := NeedCounts(t, try < 2)
			err := fn(t)
			need = n.Keys()
			return err
		})
		if err != ErrPendingUncounted {
			return err
		}
		slices.SortFunc(need, func(a, b Key) int {
			if a.Tenant != b.Tenant {
				return strings.Compare(a.Tenant, b.Tenant)
			}
			return strings.Compare(a.Webhook, b.Webhook)
		})
		if err := s.Dispatch.CountPending(ctx, slices.Compact(need)); err != nil {
			return s.Result(err)
		}
	}
}
