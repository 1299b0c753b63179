package unit

import (
	"context"
	"errors"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// Due work. A schedule is a family of empty entries whose keys start with
// a time (<nanos>/...: barrier.TimeKey), written beside what they
// schedule: the expiry of an object (barrier.ExpirySchedule), the
// removal of a card's cvc (barrier.CVCSchedule). The sweeper takes them
// in time order, in batches, each batch one unit of work: an entry is
// removed with the work it schedules, together or not at all.

// SweepDue takes, in one unit of work, up to batch entries of the
// schedule under prefix that are due: whose time is at or before
// through(now). Each entry is deleted and the rest of its key after prefix
// handed to handle, which does the entry's work in the same transaction
// and reports whether there was any; an entry of a tenant being deleted
// (the barrier's TenantGone error) is the deletion's to remove, and counts
// as none. SweepDue returns how many entries had work and whether more
// are due, and handle's and the store's errors, which undo the batch.
func (w *Work) SweepDue(ctx context.Context, prefix barrier.Prefix, through func(now time.Time) string, batch int, handle func(t *Tx, rest string) (bool, error)) (removed int, more bool, err error) {
	gone := w.barrier.TenantGone()
	err = w.Update(ctx, func(t *Tx) error {
		removed, more = 0, false
		last := through(t.Now) + "/~"
		var due []string
		err := t.Scan(prefix, "", batch+1, func(_ barrier.Key, rest string) error {
			if rest > last {
				return barrier.ErrStop
			}
			due = append(due, rest)
			return nil
		})
		if err != nil {
			return err
		}
		if len(due) > batch {
			due, more = due[:batch], true
		}
		for _, rest := range due {
			if err := t.Delete(prefix.Key(rest)); err != nil {
				return err
			}
			done, err := handle(t, rest)
			if gone != nil && errors.Is(err, gone) {
				done, err = false, nil
			}
			if err != nil {
				return err
			}
			if done {
				removed++
			}
		}
		return nil
	})
	return removed, more, err
}
