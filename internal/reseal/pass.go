package reseal

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/seal"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Batch bounds the entries one re-seal transaction visits.
const Batch = 500

// Once runs one step of the pass in t: for the first tenant due, it seals
// again, with the tenant's active term, up to Batch of its entries from
// where the last step stopped, rewriting records still in format version
// 0 (kinds tells which keys hold records, and of which type) in the
// current one, and reports how many it rewrote and whether the tenant has
// more. An entry that does not open is logged and left as it is: one
// damaged entry must not stop the re-sealing of everything else.
func Once(t *unit.Tx, kinds []unit.RecordKind, logger *slog.Logger) (resealed int, more bool, err error) {
	tid, state, found, err := due(t)
	if err != nil || !found {
		return 0, false, err
	}
	ks, err := t.TenantKeys(tid, true)
	if err != nil {
		return 0, false, err
	}
	active := ks.Ring().ActiveTerm()
	var stale []barrier.StoredValue
	all := barrier.Tenant(tid).All()
	// versioned returns, for a key holding a record with format
	// versions (internal/unit/codec.go), a new record of its type, else nil.
	versioned := func(k string) unit.Record {
		if kind, ok := unit.KindOf(kinds, tid, k); ok {
			return kind.New()
		}
		return nil
	}
	entries, err := t.ScanValuesAfter(all, strings.TrimPrefix(state.After, all.String()), Batch)
	if err != nil {
		return 0, false, err
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
			logger.Error("tokenvault: reseal: an entry does not open; left as it is", "key", kv.Key.String(), "err", err)
			continue
		}
		var rec unit.Record
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
				logger.Warn("tokenvault: reseal: a record in format version 0 cannot be written in the current format; kept in version 0", "key", kv.Key.String(), "err", err)
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
			return 0, false, err
		}
		resealed++
	}
	if visited < Batch {
		if err := t.Delete(barrier.Tenant(tid).Reseal()); err != nil {
			return 0, false, err
		}
		return resealed, false, t.Log(unit.SystemActor, tid, unit.EntityTenant, tid, unit.OpUpdate,
			fmt.Sprintf("Records re-sealed with data key term %d", active))
	}
	return resealed, true, t.PutPlainRecord(barrier.Tenant(tid).Reseal(), &state)
}

// due returns the first tenant whose re-seal may run at now.
func due(t *unit.Tx) (tid string, state State, found bool, err error) {
	markers, err := t.ScanValues(barrier.ResealMarkers)
	if err != nil {
		return "", State{}, false, err
	}
	for _, m := range markers {
		var st State
		if st.DecodeRecord(m.Key, m.Raw) != nil || !t.Now.Before(st.NotBefore) {
			return m.Rest, st, true, nil
		}
	}
	return "", State{}, false, nil
}

// Due reports whether a tenant's re-seal may run now.
func Due(t *unit.Tx) (bool, error) {
	_, _, found, err := due(t)
	return found, err
}

// Schedule marks tenant tid for re-sealing from its first record, in t,
// as soon as every instance seals with the new term: at once on a store
// one process holds (single), after twice barrier.KeyringTTL (clock skew
// between instances included) on a shared one, whose instances may keep
// sealing with the old term for up to a keyring's TTL.
func Schedule(t *unit.Tx, tid string, single bool) error {
	st := State{NotBefore: t.Now}
	if !single {
		st.NotBefore = t.Now.Add(2 * barrier.KeyringTTL)
	}
	return t.PutPlainRecord(barrier.Tenant(tid).Reseal(), &st)
}

// reencode rewrites the plaintext of a record stored at key in format
// version 0 in the current format; rec is a record of its type.
func reencode(key barrier.Key, pt []byte, rec unit.Record) ([]byte, error) {
	if err := rec.DecodeRecord(key, pt); err != nil {
		return nil, err
	}
	return rec.AppendRecord(nil, key)
}
