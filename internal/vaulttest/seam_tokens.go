package vaulttest

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// StoredToken returns, for tests, the data and index entries of a token's
// stored record as they are in the store, with nothing hidden by reads.
func StoredToken(ctx context.Context, v *tokenvault.Vault, tid, id string) (data json.RawMessage, indexes []string, err error) {
	err = testseam.Of(v).Work.Update(ctx, func(t *unit.Tx) error {
		var rec tokens.Record
		_, err := t.GetRecord(barrier.Tenant(tid).Record(tokens.Kind, id), &rec)
		data, indexes = rec.Data, rec.Indexes
		return err
	})
	return data, indexes, err
}

// ForgetCVCTime makes a card's stored record look as it did before cvc
// retention existed: its cvc kept, no CVCAt, no schedule.
func ForgetCVCTime(ctx context.Context, v *tokenvault.Vault, tid, id string) error {
	return testseam.Of(v).Work.Update(ctx, func(t *unit.Tx) error {
		var rec tokens.Record
		key := barrier.Tenant(tid).Record(tokens.Kind, id)
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
