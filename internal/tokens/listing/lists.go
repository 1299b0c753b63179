package listing

import (
	"maps"
	"slices"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// types are the token types, each with an overflow list.
var types = []string{unit.TypeToken, unit.TypeCard, unit.TypeBank}

// Lists are the token lists of one Vault: the list bookkeeping of a
// token write (List, Unlist, Move), the pages of the lists (Page), their
// one-time build (Build) and the access history (AccessLines,
// SubjectTokens). It holds what the Vault learned of its tenants' shape
// registries. Open makes one and sets its fields; it is safe for
// concurrent use once they are set.
type Lists struct {
	// Load reads the token id of tenant tid as the tokens feature does
	// (without what it hides), nil for a missing token and, unless
	// withExpired, for one past its expires_at.
	Load func(t *unit.Tx, tid, id string, withExpired bool) (*tokens.Record, error)
	// TenantDeleting reports whether tenant tid is being deleted, whose
	// tokens the build passes by (Build).
	TenantDeleting func(t *unit.Tx, tid string) (bool, error)
	// MetadataIDs lists, sorted, the ids of tenant tid's tokens whose
	// metadata index holds key with value (SubjectTokens, Find).
	MetadataIDs func(t *unit.Tx, tid, key, value string) ([]string, error)
	// FingerprintIDs lists, sorted, the ids of tenant tid's tokens with
	// the fingerprint fp, from the fingerprint index wherever the tokens
	// feature keeps it (Find).
	FingerprintIDs func(t *unit.Tx, tid, fp string) ([]string, error)
	// EntityLines is a page of the suffixes of the audit lines about the
	// entity id of type typ in tenant tid, newest first, and its
	// pagination (AccessLines).
	EntityLines func(t *unit.Tx, tid, typ, id string, pg paging.Pager) ([]string, paging.Pagination, error)

	shapes shapeCache
}

// Forget empties what the Lists learned of the shape registries, as if
// the Vault had just opened (for a test that strips a store beneath it).
func (l *Lists) Forget() { l.shapes.forget() }

// List writes rec's list entry and counts it: in the commit that writes
// a new token.
func (l *Lists) List(t *unit.Tx, rec *tokens.Record) error { return l.relist(t, rec, 1) }

// Unlist removes rec's list entry and its count, before a token is
// deleted.
func (l *Lists) Unlist(t *unit.Tx, rec *tokens.Record) error { return l.relist(t, rec, -1) }

// Move moves a token's list entry and count from those of prev to
// those of rec, its next version (an update): nothing when its type,
// containers and position stay (most updates), so an update writes no
// list entry it would only remove and put back.
func (l *Lists) Move(t *unit.Tx, prev, rec *tokens.Record) error {
	a, b := shapeOfRecord(prev), shapeOfRecord(rec)
	if prev.TenantID == rec.TenantID && a.Type == b.Type && recPosition(prev) == recPosition(rec) &&
		slices.Equal(a.Containers, b.Containers) {
		return nil
	}
	if err := l.Unlist(t, prev); err != nil {
		return err
	}
	return l.List(t, rec)
}

func (l *Lists) relist(t *unit.Tx, rec *tokens.Record, delta int64) error {
	ks, err := t.TenantKeys(rec.TenantID, false)
	if err != nil {
		return err
	}
	shape, err := l.shapeOf(t, ks, rec, delta > 0)
	if err != nil {
		return err
	}
	key := shape.list.Key(recPosition(rec))
	if delta > 0 {
		err = t.PutIndex(key)
	} else {
		err = t.Delete(key)
	}
	if err != nil {
		return err
	}
	t.AddCount(shape.count, delta)
	return nil
}

// listIndexes chooses the lists a walk of q merges: the shapes whose
// every token matches q's type and container, and the overflow lists of
// q's types (for a container, only when it is marked as holding overflow
// tokens); total is the sum of their kept counts, q's exact total unless
// it merges an overflow list that may hold tokens q does not match.
func (l *Lists) listIndexes(t *unit.Tx, ks *barrier.Keys, tid string, q Query) (idxs []barrier.Prefix, total int, exact bool, err error) {
	shapes, err := l.tenantShapes(t, tid)
	if err != nil {
		return nil, 0, false, err
	}
	exact = true
	for _, mac := range slices.Sorted(maps.Keys(shapes)) {
		if !q.matchesShape(shapes[mac]) {
			continue
		}
		ls := shapeLists(tid, mac)
		n, err := t.ReadCount(ls.count)
		if err != nil {
			return nil, 0, false, err
		}
		// Walked whatever its count says: a count is never what
		// decides whether a token is shown.
		idxs, total = append(idxs, ls.list), total+n
	}
	filtered := q.Container != "" && q.Container != "/"
	if filtered {
		// The overflow lists hold no token of the container unless a
		// token of an overflow shape marked it.
		marked, err := t.Has(overflowMark(ks, tid, q.Container))
		if err != nil || !marked {
			return idxs, total, exact, err
		}
	}
	for _, typ := range types {
		if q.Type != "" && typ != q.Type {
			continue
		}
		ls := shapeLists(tid, overflowMAC(ks, typ))
		n, err := t.ReadCount(ls.count)
		if err != nil {
			return nil, 0, false, err
		}
		idxs = append(idxs, ls.list)
		if filtered {
			exact = false
		} else {
			total += n
		}
	}
	return idxs, total, exact, nil
}
