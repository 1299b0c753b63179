package access

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
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
