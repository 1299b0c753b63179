package access

import (
	"slices"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// LoadApplication returns the application id of tenant tid, read in t, or
// nil if it does not exist or has expired (an id that is not a UUID is
// none, without a lookup): what a key, a session or a reactor acts
// through.
func LoadApplication(t *unit.Tx, tid, id string) (*ApplicationRecord, error) {
	if !unit.ValidID(id) {
		return nil, nil
	}
	var rec ApplicationRecord
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntityApplication, id), &rec)
	if err != nil || !ok {
		return nil, err
	}
	if rec.Expired(t.Now) {
		return nil, nil
	}
	return &rec, nil
}

// MustApplication is LoadApplication with NotFound for a missing one.
func MustApplication(t *unit.Tx, tid, id string) (*ApplicationRecord, error) {
	rec, err := LoadApplication(t, tid, id)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, unit.NotFoundError("application")
	}
	return rec, nil
}

// ListApplications returns one page of the applications of tenant tid,
// oldest first, as paging.Records reads them (a page costs what it
// returns); an expired application is not shown. ids, when non-empty,
// keeps only these applications.
func ListApplications(t *unit.Tx, tid string, pg paging.Pager, ids []string) (*paging.Page[ApplicationRecord], error) {
	return paging.Records(t, tid, unit.EntityApplication, pg, len(ids) > 0, func(kv barrier.StoredValue) (*ApplicationRecord, error) {
		if len(ids) > 0 && !slices.Contains(ids, kv.Rest) {
			return nil, nil
		}
		var rec ApplicationRecord
		if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil || rec.Expired(t.Now) {
			return nil, err
		}
		return &rec, nil
	})
}
