package tokenvault

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/tokens"
)

// DefaultCVCRetention is how long a card's cvc is kept when
// Options.Retention.CVC is zero.
const DefaultCVCRetention = time.Hour

// A card's cvc (card verification code) may be kept only briefly (PCI DSS
// forbids storing it after authorization). A card record remembers when
// its cvc was written (CVCAt: tokenizing, or a patch sending a cvc); once
// Options.Retention.CVC has passed since then:
//
//   - every read leaves the cvc out at once, whether the sweeper has run or
//     not: records are filtered where they are opened (loadToken, which
//     every list reads them through), so GetToken, ListTokens, SearchTokens,
//     Detokenize, reactor arguments, proxy bodies and req.client all see
//     the card without it, and a patch cannot bring it back;
//   - the sweeper removes it from the stored record, in store transactions
//     of at most sweepBatch cards, found through the schedule
//     sys/cvc/<write time>/<tid>/<id>. The schedule is by write time, not
//     by due time, so that a retention changed between runs applies to
//     cvcs already stored.
//
// Masks, fingerprints and search indexes of a card are computed over its
// data without the cvc (see tokens.ExprData), so nothing derived from a cvc is
// kept past its window.

// sweepCVCs removes from the stored records every cvc past its retention,
// in transactions of at most sweepBatch cards, and returns how many it
// removed. Sweep calls it.
func (v *Vault) sweepCVCs(ctx context.Context) (int, error) {
	total, err := v.scheduleLegacyCVCs(ctx)
	if err != nil {
		return total, err
	}
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
	through := func(now time.Time) string { return barrier.TimeKey(now.Add(-v.cvcRetention)) }
	return v.sweepDue(ctx, barrier.CVCSchedule, through, func(t *txn, rest string) (bool, error) {
		// rest is <nanos>/<tenant>/<id>.
		parts := strings.SplitN(rest, "/", 3)
		if len(parts) != 3 {
			return false, nil
		}
		done, err := t.removeCVC(parts[1], parts[2], parts[0])
		if done {
			t.sweptOne(SweptCVCs)
		}
		return done, err
	})
}

// removeCVC writes the card tid/id again without the cvc its schedule
// entry (written at stamp) was for. It reports false when there is nothing
// to remove: the token is gone, or its cvc was removed or written again
// since (a newer cvc has its own entry).
func (t *txn) removeCVC(tid, id, stamp string) (bool, error) {
	key := barrier.Tenant(tid).Record(tokens.Kind, id)
	var rec tokens.Record
	ok, err := t.GetRecord(key, &rec)
	if err != nil || !ok {
		return false, err
	}
	if rec.CVCAt == nil || barrier.TimeKey(*rec.CVCAt) != stamp || !t.v.cvcDue(&rec, t.Now) {
		return false, nil
	}
	rec.Data = tokens.WithoutCVC(rec.Data)
	rec.CVCAt = nil
	rec.Indexes = slices.DeleteFunc(rec.Indexes, func(k string) bool { return strings.HasPrefix(k, barrier.CVCSchedule.String()) })
	if err := t.PutRecord(key, &rec); err != nil {
		return false, err
	}
	if err := tokens.EmitCVCExpired(t.Tx, &rec); err != nil {
		return false, err
	}
	return true, t.Log(systemActor, tid, rec.Type, id, OpUpdate, "Card cvc removed (retention)")
}

// scheduleLegacyCVCs gives every card stored before cvc retention existed
// (a cvc without CVCAt) its schedule: it visits every tenant's token
// records once, sweepBatch a transaction, removing the cvcs already due and
// recording when the others were written (tokens.CVCWrittenAt). Cards written
// since carry their schedule, so once the scan is done it is one read per
// sweep. It returns how many cvcs it removed.
func (v *Vault) scheduleLegacyCVCs(ctx context.Context) (int, error) {
	total := 0
	for {
		n, done, err := v.scheduleLegacyCVCsOnce(ctx)
		total += n
		if err != nil || done {
			return total, err
		}
	}
}

func (v *Vault) scheduleLegacyCVCsOnce(ctx context.Context) (removed int, done bool, err error) {
	err = v.update(ctx, func(t *txn) error {
		removed, done = 0, false
		var st tokens.LegacyCVCScan
		if _, err := t.GetRecord(barrier.SysCVCScan, &st); err != nil {
			return err
		}
		if st.Done {
			done = true
			return nil
		}
		// The next tenant with records left: st.Tenant, then those after.
		var tenants []string
		err := t.ScanKeys(barrier.TenantRegistry, func(_ barrier.Key, tid string) error {
			if tid >= st.Tenant {
				tenants = append(tenants, tid)
			}
			return nil
		})
		if err != nil {
			return err
		}
		visited := 0
		for _, tid := range tenants {
			if tid != st.Tenant {
				st.Tenant, st.After = tid, ""
			}
			prefix := barrier.Tenant(tid).Records(tokens.Kind)
			kvs, err := t.ScanValuesAfter(prefix, strings.TrimPrefix(st.After, prefix.String()), sweepBatch-visited)
			if err != nil {
				return err
			}
			for _, kv := range kvs {
				visited++
				st.After = kv.Key.String()
				n, err := t.scheduleLegacyCVC(kv)
				if err != nil {
					return err
				}
				removed += n
			}
			if visited == sweepBatch {
				return t.PutRecord(barrier.SysCVCScan, &st)
			}
		}
		st.Done, done = true, true
		return t.PutRecord(barrier.SysCVCScan, &st)
	})
	return removed, done, err
}

// scheduleLegacyCVC handles one token record of the legacy scan: a card
// holding a cvc without CVCAt gets it removed if due, else its write time
// and schedule. It returns 1 when it removed a cvc.
func (t *txn) scheduleLegacyCVC(kv barrier.StoredValue) (int, error) {
	var rec tokens.Record
	if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
		return 0, err
	}
	at, ok := tokens.CVCWrittenAt(&rec)
	if !ok || rec.CVCAt != nil {
		return 0, nil
	}
	if t.v.cvcDue(&rec, t.Now) {
		rec.Data = tokens.WithoutCVC(rec.Data)
		if err := t.PutRecord(kv.Key, &rec); err != nil {
			return 0, err
		}
		if err := tokens.EmitCVCExpired(t.Tx, &rec); err != nil {
			return 0, err
		}
		return 1, t.Log(systemActor, rec.TenantID, rec.Type, rec.ID, OpUpdate, "Card cvc removed (retention)")
	}
	rec.CVCAt = &at
	entry := barrier.Tenant(rec.TenantID).CVCDue(at, rec.ID)
	rec.Indexes = append(rec.Indexes, entry.String())
	slices.Sort(rec.Indexes)
	if err := t.PutIndex(entry); err != nil {
		return 0, err
	}
	return 0, t.PutRecord(kv.Key, &rec)
}
