package vaulttest

import (
	"context"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/lease"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// LogLines writes n audit lines to tenant tid, perTxn of them in
// each transaction, the way every line is written (logLine: the line,
// its index entry, its queue entry), then links them (linkNow): a chain of a million lines in
// a thousand commits, where the API would take a million calls.
func LogLines(ctx context.Context, v *tokenvault.Vault, tid string, n, perTxn int) error {
	for n > 0 {
		m := min(n, perTxn)
		err := testseam.Of(v).Work.Update(ctx, func(t *unit.Tx) error {
			for range m {
				if err := t.Log(unit.Actor{ID: tid, Type: "user"}, tid, unit.EntityTenant, tid, unit.OpRead, "Tenant read"); err != nil {
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
	return testseam.Of(v).Linker.LinkNow(ctx)
}

// HoldLinkerLease makes the linker lease look held, until until,
// by another instance (one stopped, or dead): v links nothing until then.
func HoldLinkerLease(ctx context.Context, v *tokenvault.Vault, until time.Time) error {
	err := testseam.Of(v).Work.Update(ctx, func(t *unit.Tx) error {
		var rec lease.Record
		if _, err := t.GetRecord(barrier.Lease(lease.Linker), &rec); err != nil {
			return err
		}
		rec = lease.Record{Holder: "00000000000000ff", Epoch: rec.Epoch + 1, Expires: until}
		return t.PutRecord(barrier.Lease(lease.Linker), &rec)
	})
	testseam.Of(v).LinkLease().Forget(testseam.Of(v).LinkLease().Held())
	return err
}

// LinkNow links, for tests, every queued audit line (auditlog.Linker) if
// v's instance holds the linker lease or can take it.
func LinkNow(ctx context.Context, v *tokenvault.Vault) error {
	return testseam.Of(v).Linker.LinkNow(ctx)
}
