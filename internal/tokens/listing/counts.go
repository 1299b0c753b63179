package listing

import (
	"maps"
	"slices"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// Counts are how many tokens a tenant holds, from the kept counts of its
// list shapes (doc.go): nothing but the shape registry and one count per
// shape is read, never a token, and no commit writes anything for them.
type Counts struct {
	// Total is every token of the tenant.
	Total int
	// ByType is the tokens of each type (every type, zero included).
	ByType map[string]int
	// ByContainer is, for each container a registered shape names, the
	// tokens that hold it (a token with two containers is in both).
	ByContainer map[string]int
	// Unplaced is the tokens of the overflow lists: shapes the full
	// registry had no room for, so their containers are not counted in
	// ByContainer (they are in Total and ByType).
	Unplaced int
}

// Counts reads tenant tid's token counts in t.
//
// Returns the store's errors, or Internal for a count that does not open.
func (l *Lists) Counts(t *unit.Tx, tid string) (Counts, error) {
	out := Counts{ByType: map[string]int{}, ByContainer: map[string]int{}}
	for _, typ := range types {
		out.ByType[typ] = 0
	}
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return out, err
	}
	shapes, err := l.tenantShapes(t, tid)
	if err != nil {
		return out, err
	}
	for _, mac := range slices.Sorted(maps.Keys(shapes)) {
		n, err := t.ReadCount(shapeLists(tid, mac).count)
		if err != nil {
			return out, err
		}
		s := shapes[mac]
		out.Total += n
		out.ByType[s.Type] += n
		for _, c := range s.Containers {
			out.ByContainer[c] += n
		}
	}
	for _, typ := range types {
		n, err := t.ReadCount(shapeLists(tid, overflowMAC(ks, typ)).count)
		if err != nil {
			return out, err
		}
		out.Total += n
		out.ByType[typ] += n
		out.Unplaced += n
	}
	return out, nil
}
