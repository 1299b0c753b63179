package listing

import (
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// eachChunk is how many list positions Each reads from an index at a time.
const eachChunk = 256

// Each calls fn with every live token record of tenant tid matching q, in
// t (one snapshot), holding a bounded number at a time: what an export
// streams. A walkable query (Query.Walkable) walks the list indexes in
// list order (creation, then id), reading them in chunks; a query with an
// exact-value filter reads that index's ids (ids only, never the
// records) and loads each in id order. Expired tokens are left out, as
// every list leaves them, and so are tokens of an erased data subject
// (restored from an older backup: their data is gone). It stops at fn's first error and returns it,
// or the store's.
//
// Each does not decide who may see a record: its caller does (the root's
// ExportTokens, for a key holding token:export, which covers the tenant).
func (l *Lists) Each(t *unit.Tx, tid string, q Query, fn func(*tokens.Record) error) error {
	if !q.Walkable() {
		ids, err := l.candidates(t, tid, q)
		if err != nil {
			return err
		}
		for _, id := range ids {
			rec, err := l.Load(t, tid, id, false)
			if err != nil {
				return err
			}
			if rec == nil || rec.Erased || rec.Expired(t.Now) || !q.Matches(rec) {
				continue
			}
			if err := fn(rec); err != nil {
				return err
			}
		}
		return nil
	}
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return err
	}
	idxs, _, _, err := l.listIndexes(t, ks, tid, q)
	if err != nil {
		return err
	}
	walk := newListWalk(t, idxs, "")
	for {
		pos, ok, err := walk.next(eachChunk)
		if err != nil || !ok {
			return err
		}
		rec, err := l.listed(t, q, tid, pos)
		if err != nil {
			return err
		}
		if rec == nil || rec.Erased {
			continue
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}
