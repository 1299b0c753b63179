package tokenvault

import (
	"context"
	"errors"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/store"
)

// pruneLogs removes the audit log lines older than Options.Retention.Logs from
// every tenant, sweepBatch lines a transaction, and returns how many it
// removed. A line goes with its index entry (in either layout, and a line
// of the legacy layout with its log-type entry too; see logs.go), in one
// transaction, so no index ever names a missing line. The pruning is not itself written to the
// tenants' logs (those lines would be pruned in their turn); the sweeper
// reports the count to the host's logger. Lines an audit sink has yet to
// receive are kept (audit_export.go).
func (v *Vault) pruneLogs(ctx context.Context) (int, error) {
	if err := v.dropLegacyLogIndex(ctx); err != nil {
		return 0, err
	}
	if v.logRetention <= 0 {
		return 0, nil
	}
	var tenants []string
	err := v.view(ctx, func(t *txn) error {
		tenants = tenants[:0]
		return t.ScanKeys(barrier.TenantRegistry, func(_ barrier.Key, tid string) error {
			tenants = append(tenants, tid)
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	total := 0
	for _, tid := range tenants {
		for {
			n, more, err := v.pruneTenantLogs(ctx, tid)
			total += n
			if err != nil {
				return total, err
			}
			if !more {
				break
			}
		}
	}
	return total, nil
}

// pruneTenantLogs removes up to sweepBatch of tenant tid's lines older than
// the retention, oldest first, in one transaction.
func (v *Vault) pruneTenantLogs(ctx context.Context, tid string) (removed int, more bool, err error) {
	if err := v.foldAppends(ctx); err != nil {
		return 0, false, err
	}
	err = v.update(ctx, func(t *txn) error {
		removed, more = 0, false
		prefix := barrier.Tenant(tid).Logs()
		// Lines are keyed log/<nanos>/<id>: everything before the cutoff's
		// nanos is due.
		cutoff := barrier.TimeKey(t.now.Add(-v.logRetention))
		var due []string
		err := t.Scan(prefix, "", sweepBatch+1, func(_ barrier.Key, suffix string) error {
			if suffix >= cutoff {
				return store.ErrStop
			}
			due = append(due, suffix)
			return nil
		})
		if err != nil {
			return err
		}
		if len(due) > sweepBatch {
			due, more = due[:sweepBatch], true
		}
		for _, suffix := range due {
			// A line an audit sink has yet to receive is kept, and so
			// are the later ones: the sink's queue is in time order.
			if waiting, err := t.exportPending(tid, suffix); err != nil || waiting {
				more = false
				return err
			}
			var l logRecord
			ok, err := t.getRecord(prefix.Key(suffix), &l)
			if errors.Is(err, errTenantGone) {
				return nil // being deleted: its logs go with it
			}
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			// The line's index entry, in whichever layout (logs.go).
			keys := []barrier.Key{prefix.Key(suffix), lineIndexKey(tid, l.EntityType, l.EntityID, suffix),
				barrier.Tenant(tid).LogEntityIndex(l.EntityType, l.EntityID).Key(suffix), barrier.Tenant(tid).LogTypeIndex(l.EntityType).Key(suffix)}
			for _, k := range keys {
				if err := t.Delete(k); err != nil {
					return err
				}
			}
			removed++
			t.sweptOne(SweptLogs)
		}
		return nil
	})
	return removed, more, err
}

// dropLegacyLogIndex removes the log-type index entries audit lines had
// before format version 1 (see logs.go), sweepBatch entries a transaction.
// Nothing reads them any more; this only gives their space back. A store
// without any costs one read transaction.
func (v *Vault) dropLegacyLogIndex(ctx context.Context) error {
	var tenants []string
	err := v.view(ctx, func(t *txn) error {
		tenants = tenants[:0]
		var all []string
		err := t.ScanKeys(barrier.TenantRegistry, func(_ barrier.Key, tid string) error {
			all = append(all, tid)
			return nil
		})
		if err != nil {
			return err
		}
		for _, tid := range all {
			err := t.Scan(barrier.Tenant(tid).LogTypeIndexes(), "", 1, func(barrier.Key, string) error {
				tenants = append(tenants, tid)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, tid := range tenants {
		for more := true; more; {
			err := v.update(ctx, func(t *txn) error {
				var keys []barrier.Key
				err := t.Scan(barrier.Tenant(tid).LogTypeIndexes(), "", sweepBatch+1, func(k barrier.Key, _ string) error {
					keys = append(keys, k)
					return nil
				})
				if err != nil {
					return err
				}
				more = len(keys) > sweepBatch
				for _, k := range keys[:min(len(keys), sweepBatch)] {
					if err := t.Delete(k); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}
