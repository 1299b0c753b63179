package tokenvault

import (
	"context"
	"encoding/json"
)

// StoredToken returns, for tests, the data and index entries of a token's
// stored record as they are in the store, with nothing hidden by reads.
func StoredToken(ctx context.Context, v *Vault, tid, id string) (data json.RawMessage, indexes []string, err error) {
	err = v.update(ctx, func(t *txn) error {
		var rec tokenRecord
		_, err := t.getRecord(recordKey(tid, kindToken, id), &rec)
		data, indexes = rec.Data, rec.Indexes
		return err
	})
	return data, indexes, err
}
