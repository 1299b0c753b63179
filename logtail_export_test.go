package tokenvault

import "context"

// IndexLogTails runs, for tests, one pass of the log indexer (logtail.go)
// over the tenants that left lines to it, as the background indexer does
// every logIndexInterval; it returns how many lines it indexed.
func IndexLogTails(ctx context.Context, v *Vault) (int, error) { return v.indexLogTails(ctx) }

// LogIndexHorizon is how old a line must be for the indexer to take it.
const LogIndexHorizon = logIndexHorizon

// UnindexedLines returns, for tests, the key suffixes of tenant tid's
// lines that have no entity index entry, and its tail marker ("" when it
// has none).
func UnindexedLines(ctx context.Context, v *Vault, tid string) (missing []string, marker string, err error) {
	err = v.view(ctx, func(t *txn) error {
		marker, _, err = t.logTail(tid)
		if err != nil {
			return err
		}
		lines, err := t.scanValues(logPrefix(tid))
		if err != nil {
			return err
		}
		for _, sv := range lines {
			var l logRecord
			if err := t.openRecord(sv.key, sv.raw, &l); err != nil {
				return err
			}
			ok, err := t.has(lineIndexKey(tid, l.EntityType, l.EntityID, sv.rest))
			if err != nil {
				return err
			}
			if !ok {
				missing = append(missing, sv.rest)
			}
		}
		return nil
	})
	return missing, marker, err
}
