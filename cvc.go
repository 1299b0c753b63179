package tokenvault

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/store"
)

// DefaultCVCRetention is how long a card's cvc is kept when
// Options.CVCRetention is zero.
const DefaultCVCRetention = time.Hour

// A card's cvc (card verification code) may be kept only briefly (PCI DSS
// forbids storing it after authorization). A card record remembers when
// its cvc was written (CVCAt: tokenizing, or a patch sending a cvc); once
// Options.CVCRetention has passed since then:
//
//   - every read leaves the cvc out at once, whether the sweeper has run or
//     not: records are filtered where they are opened (loadToken and the
//     scan of queryTokens), so GetToken, ListTokens, SearchTokens,
//     Detokenize, reactor arguments, proxy bodies and req.client all see
//     the card without it, and a patch cannot bring it back;
//   - the sweeper removes it from the stored record, in store transactions
//     of at most sweepBatch cards, found through the schedule
//     sys/cvc/<write time>/<tid>/<id>. The schedule is by write time, not
//     by due time, so that a retention changed between runs applies to
//     cvcs already stored.
//
// Masks, fingerprints and search indexes of a card are computed over its
// data without the cvc (see exprData), so nothing derived from a cvc is
// kept past its window.

// cvcField is the card data field that is kept only for the retention.
const cvcField = "cvc"

// hasCVC reports whether data, of a token of type typ, holds a cvc.
func hasCVC(typ string, data any) bool {
	m, ok := data.(map[string]any)
	_, has := m[cvcField]
	return ok && has && typ == TypeCard
}

// exprData is the data a token's expressions (mask, fingerprint, search
// indexes) are evaluated over: a card's without its cvc.
func exprData(typ string, data any) any {
	if !hasCVC(typ, data) {
		return data
	}
	m := data.(map[string]any)
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != cvcField {
			out[k] = v
		}
	}
	return out
}

// cvcKey schedules the removal of the cvc written at at.
func cvcKey(at time.Time, tid, id string) string {
	return sysCVCKey + timeKey(at) + "/" + tid + "/" + id
}

// cvcDue reports whether rec holds a cvc past its retention at now.
func (v *Vault) cvcDue(rec *tokenRecord, now time.Time) bool {
	return rec.CVCAt != nil && !now.Before(rec.CVCAt.Add(v.cvcRetention))
}

// hideStaleCVC leaves a cvc past its retention out of rec as read, before
// anything else sees the record.
func (t *txn) hideStaleCVC(rec *tokenRecord) {
	if t.v.cvcDue(rec, t.now) {
		rec.Data = withoutCVC(rec.Data)
		rec.CVCAt = nil
	}
}

// withoutCVC removes the cvc from stored card data.
func withoutCVC(raw json.RawMessage) json.RawMessage {
	d, err := decodeJSON(raw)
	m, ok := d.(map[string]any)
	if err != nil || !ok {
		return raw
	}
	delete(m, cvcField)
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}

// sweepCVCs removes from the stored records every cvc past its retention,
// in transactions of at most sweepBatch cards, and returns how many it
// removed. Sweep calls it.
func (v *Vault) sweepCVCs(ctx context.Context) (int, error) {
	total := 0
	for {
		n, more, err := v.sweepCVCsOnce(ctx)
		total += n
		if err != nil || !more {
			return total, err
		}
	}
}

// sweepCVCsOnce removes up to sweepBatch due cvcs in one transaction: each
// card record is written again without its cvc, its schedule entry
// deleted, and the removal logged, together or not at all.
func (v *Vault) sweepCVCsOnce(ctx context.Context) (removed int, more bool, err error) {
	err = v.update(ctx, func(t *txn) error {
		removed, more = 0, false
		cutoff := timeKey(t.now.Add(-v.cvcRetention))
		var due []string
		err := t.tx.Scan([]byte(sysCVCKey), nil, sweepBatch+1, func(k, _ []byte) error {
			rest := string(k[len(sysCVCKey):])
			if rest > cutoff+"/~" {
				return store.ErrStop
			}
			due = append(due, rest)
			return nil
		})
		if err != nil {
			return err
		}
		if len(due) > sweepBatch {
			due, more = due[:sweepBatch], true
		}
		for _, rest := range due {
			if err := t.delete(sysCVCKey + rest); err != nil {
				return err
			}
			// rest is <nanos>/<tenant>/<id>.
			parts := strings.SplitN(rest, "/", 3)
			if len(parts) != 3 {
				continue
			}
			ok, err := t.removeCVC(parts[1], parts[2], parts[0])
			if err != nil {
				return err
			}
			if ok {
				removed++
			}
		}
		return nil
	})
	return removed, more, err
}

// removeCVC writes the card tid/id again without the cvc its schedule
// entry (written at stamp) was for. It reports false when there is nothing
// to remove: the token is gone, or its cvc was removed or written again
// since (a newer cvc has its own entry).
func (t *txn) removeCVC(tid, id, stamp string) (bool, error) {
	key := recordKey(tid, kindToken, id)
	var rec tokenRecord
	ok, err := t.getRecord(key, &rec)
	if err != nil || !ok {
		return false, err
	}
	if rec.CVCAt == nil || timeKey(*rec.CVCAt) != stamp || !t.v.cvcDue(&rec, t.now) {
		return false, nil
	}
	rec.Data = withoutCVC(rec.Data)
	rec.CVCAt = nil
	rec.Indexes = slices.DeleteFunc(rec.Indexes, func(k string) bool { return strings.HasPrefix(k, sysCVCKey) })
	if err := t.putRecord(key, &rec); err != nil {
		return false, err
	}
	return true, t.log(systemActor, tid, rec.Type, id, OpUpdate, "Card cvc removed (retention)")
}
