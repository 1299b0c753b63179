package vaulttest

import (
	"context"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// IndexPending runs, for tests, one pass of the log indexer
// (auditlog.Indexer) over the tenants that wrote pending entries, as the
// background indexer does every quarter of a second; it returns how many
// entries it indexed.
func IndexPending(ctx context.Context, v *tokenvault.Vault) (int, error) {
	return testseam.Of(v).Indexer.IndexPending(ctx)
}

// LogIndexHorizon is how old a pending entry must be for the indexer.
const LogIndexHorizon = auditlog.IndexHorizon

// UnindexedLines returns, for tests, the key suffixes of tenant tid's
// lines that have no entity index entry, and those of the lines that have
// a pending one.
func UnindexedLines(ctx context.Context, v *tokenvault.Vault, tid string) (missing, pending []string, err error) {
	if err := testseam.Of(v).FoldAppends(ctx); err != nil {
		return nil, nil, err
	}
	err = testseam.Of(v).Work.View(ctx, func(t *unit.Tx) error {
		err := t.ScanKeys(barrier.Tenant(tid).PendingLogIndex(), func(_ barrier.Key, rest string) error {
			if e, ok := auditlog.ParsePending(rest); ok {
				pending = append(pending, e.Suffix)
			}
			return nil
		})
		if err != nil {
			return err
		}
		lines, err := t.ScanValues(barrier.Tenant(tid).Logs())
		if err != nil {
			return err
		}
		for _, sv := range lines {
			var l auditlog.LineRecord
			if err := t.OpenRecord(sv.Key, sv.Raw, &l); err != nil {
				return err
			}
			ok, err := t.Has(auditlog.IndexKey(tid, l.EntityType, l.EntityID, sv.Rest))
			if err != nil {
				return err
			}
			if !ok {
				missing = append(missing, sv.Rest)
			}
		}
		return nil
	})
	return missing, pending, err
}
