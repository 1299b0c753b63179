package tokenvault

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/tokens"
)

// StoredToken returns, for tests, the data and index entries of a token's
// stored record as they are in the store, with nothing hidden by reads.
func StoredToken(ctx context.Context, v *Vault, tid, id string) (data json.RawMessage, indexes []string, err error) {
	err = v.update(ctx, func(t *txn) error {
		var rec tokens.Record
		_, err := t.GetRecord(barrier.Tenant(tid).Record(kindToken, id), &rec)
		data, indexes = rec.Data, rec.Indexes
		return err
	})
	return data, indexes, err
}

// ForgetCVCTime makes a card's stored record look as it did before cvc
// retention existed: its cvc kept, no CVCAt, no schedule.
func ForgetCVCTime(ctx context.Context, v *Vault, tid, id string) error {
	return v.update(ctx, func(t *txn) error {
		var rec tokens.Record
		key := barrier.Tenant(tid).Record(kindToken, id)
		if _, err := t.GetRecord(key, &rec); err != nil {
			return err
		}
		var kept []string
		for _, k := range rec.Indexes {
			if strings.HasPrefix(k, barrier.CVCSchedule.String()) {
				if err := t.Delete(barrier.IndexEntry(k)); err != nil {
					return err
				}
				continue
			}
			kept = append(kept, k)
		}
		rec.Indexes, rec.CVCAt = kept, nil
		return t.PutRecord(key, &rec)
	})
}
