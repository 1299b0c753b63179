package tokenvault

import (
	"context"
	"fmt"
	"strings"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/seal"
)

// Re-sealing after a data key rotation.
//
// RotateDataKey makes every new write use the new term at once, and
// records sealed before stay readable under their older terms. So that a
// key rotated out (because it may have leaked, or by policy) soon protects
// nothing, RotateDataKey also schedules the tenant for re-sealing, and
// Reseal, which the background sweeper runs, seals every record of the
// tenant again with the active term. It works resealBatch entries per
// transaction and remembers where it stopped, so a large tenant is done
// in small steps that never hold the store for long, and a restart resumes
// rather than starts over. Only ciphertexts change: values, indexes and
// the audit log stay as they were, except that records of the tenant
// still stored in the JSON of their format version 0 (tenantRecordKinds)
// are rewritten in the current format (records.go) on the way. One that holds
// what the current format cannot (a time before year 0 in UTC:
// unit.CheckRecordTimes) is sealed again as it is, still in version 0.
//
// On a store shared by several instances, one that has the keyring cached
// keeps sealing with the old term for up to keyringTTL, so the pass starts
// only after twice that (clock skew between instances included); what is
// written after it starts uses the new term everywhere.

// resealBatch bounds the entries one re-seal transaction visits.
const resealBatch = 500

// dueReseal returns the first tenant whose re-seal may run at now.
func (t *txn) dueReseal() (tid string, state resealState, found bool, err error) {
	markers, err := t.ScanValues(barrier.ResealMarkers)
	if err != nil {
		return "", resealState{}, false, err
	}
	for _, m := range markers {
		var st resealState
		if st.DecodeRecord(m.Key, m.Raw) != nil || !t.Now.Before(st.NotBefore) {
			return m.Rest, st, true, nil
		}
	}
	return "", resealState{}, false, nil
}

// Reseal seals again, with the tenant's active data key, every record of
// each tenant whose data key was rotated since its records were last
// re-sealed, and returns how many records it rewrote. The background
// sweeper calls it every Options.Retention.SweepInterval; hosts that disable the
// sweeper call it themselves. It needs no API key: it changes no data.
//
// Returns StorageFull or Internal, with the count of records rewritten
// before the failure; a later call goes on where it stopped.
func (v *Vault) Reseal(ctx context.Context) (int, error) {
	// Look first in a read transaction: most of the time nothing is
	// scheduled, and a write transaction would cost a commit.
	pending := false
	err := v.view(ctx, func(t *txn) error {
		var err error
		_, _, pending, err = t.dueReseal()
		return err
	})
	if err != nil || !pending {
		return 0, err
	}
	total := 0
	for {
		n, more, err := v.resealOnce(ctx)
		total += n
		if err != nil || !more {
			return total, err
		}
	}
}

// resealOnce re-seals up to resealBatch entries of the first tenant
// scheduled, in one transaction.
func (v *Vault) resealOnce(ctx context.Context) (resealed int, more bool, err error) {
	// A line appended before a rotation, sealed with the older term, is
	// in the store before this pass looks.
	if err := v.foldAppends(ctx); err != nil {
		return 0, false, err
	}
	err = v.update(ctx, func(t *txn) error {
		resealed, more = 0, false
		tid, state, found, err := t.dueReseal()
		if err != nil || !found {
			return err
		}
		ks, err := t.TenantKeys(tid, true)
		if err != nil {
			return err
		}
		active := ks.Ring().ActiveTerm()
		var stale []barrier.StoredValue
		all := barrier.Tenant(tid).All()
		kinds := tenantRecordKinds(tid)
		// versioned returns, for a key holding a record with format
		// versions (records.go), a new record of its type, else nil.
		versioned := func(k string) recordCodec {
			for _, kind := range kinds {
				if strings.HasPrefix(k, kind.prefix.String()) {
					return kind.zero()
				}
			}
			return nil
		}
		entries, err := t.ScanValuesAfter(all, strings.TrimPrefix(state.After, all.String()), resealBatch)
		if err != nil {
			return err
		}
		visited := len(entries)
		for _, e := range entries {
			state.After = e.Key.String()
			if e.Key.String() == barrier.Tenant(tid).Keyring().String() || len(e.Raw) == 0 {
				continue // wrapped by the master key; index entries hold nothing
			}
			// Records are opened whatever their term, to find those
			// still in the JSON of format version 0.
			if term, ok := seal.Term(e.Raw); !ok || term != active || versioned(e.Key.String()) != nil {
				stale = append(stale, e)
			}
		}
		for _, kv := range stale {
			pt, err := ks.Ring().Open([]byte(kv.Key.String()), kv.Raw)
			if err != nil {
				// Leave it as it is, and go on: one damaged entry must
				// not stop the re-sealing of everything else.
				v.logger.Error("tokenvault: reseal: an entry does not open; left as it is", "key", kv.Key.String(), "err", err)
				continue
			}
			var rec recordCodec
			if len(pt) > 0 && pt[0] == '{' {
				rec = versioned(kv.Key.String())
			}
			legacy := rec != nil
			term, _ := seal.Term(kv.Raw)
			if term == active && !legacy {
				clear(pt)
				continue
			}
			if legacy {
				converted, err := reencode(kv.Key, pt, rec)
				if err != nil {
					// It stays in format version 0, which reads as it
					// did; sealed again all the same (unless it is
					// already), so that the rotated-out key protects
					// nothing.
					v.logger.Warn("tokenvault: reseal: a record in format version 0 cannot be written in the current format; kept in version 0", "key", kv.Key.String(), "err", err)
					if term == active {
						clear(pt)
						continue
					}
				} else {
					clear(pt)
					pt = converted
				}
			}
			err = t.Reseal(kv.Key, pt)
			clear(pt)
			if err != nil {
				return err
			}
			resealed++
		}
		if visited < resealBatch {
			if err := t.Delete(barrier.Tenant(tid).Reseal()); err != nil {
				return err
			}
			return t.Log(systemActor, tid, EntityTenant, tid, OpUpdate,
				fmt.Sprintf("Records re-sealed with data key term %d", active))
		}
		more = true
		return t.PutPlainRecord(barrier.Tenant(tid).Reseal(), &state)
	})
	return resealed, more, err
}

// scheduleReseal marks tid for re-sealing from its first record, as soon
// as every instance seals with the new term.
func (t *txn) scheduleReseal(tid string) error {
	st := resealState{NotBefore: t.Now}
	if !t.v.auth.SingleProcess() {
		st.NotBefore = t.Now.Add(2 * barrier.KeyringTTL)
	}
	return t.PutPlainRecord(barrier.Tenant(tid).Reseal(), &st)
}

// reencode rewrites the plaintext of a record stored at key in format
// version 0 in the current format; rec is a record of its type.
func reencode(key barrier.Key, pt []byte, rec recordCodec) ([]byte, error) {
	if err := rec.DecodeRecord(key, pt); err != nil {
		return nil, err
	}
	return rec.AppendRecord(nil, key)
}
