package tokenvault

import (
	"context"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/lease"
)

// LogLinesForTest writes n audit lines to tenant tid, perTxn of them in
// each transaction, the way every line is written (logLine: the line,
// its index entry, its queue entry), then links them (linkNow): a chain of a million lines in
// a thousand commits, where the API would take a million calls.
func (v *Vault) LogLinesForTest(ctx context.Context, tid string, n, perTxn int) error {
	for n > 0 {
		m := min(n, perTxn)
		err := v.update(ctx, func(t *txn) error {
			for range m {
				if err := t.Log(actor{ID: tid, Type: "user"}, tid, EntityTenant, tid, OpRead, "Tenant read"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		n -= m
	}
	return v.linkNow(ctx)
}

// HoldLinkerLeaseForTest makes the linker lease look held, until until,
// by another instance (one stopped, or dead): v links nothing until then.
func HoldLinkerLeaseForTest(ctx context.Context, v *Vault, until time.Time) error {
	err := v.update(ctx, func(t *txn) error {
		var rec lease.Record
		if _, err := t.GetRecord(barrier.Lease(lease.Linker), &rec); err != nil {
			return err
		}
		rec = lease.Record{Holder: "00000000000000ff", Epoch: rec.Epoch + 1, Expires: until}
		return t.PutRecord(barrier.Lease(lease.Linker), &rec)
	})
	v.linkLease().Forget(v.linkLease().Held())
	return err
}

// LinkNow links, for tests, every queued audit line (chain_linker.go) if
// v's instance holds the linker lease or can take it.
func LinkNow(ctx context.Context, v *Vault) error { return v.linkNow(ctx) }
