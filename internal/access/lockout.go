package access

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// A tenant is managed only through its management applications: the host
// program creates the first one, holding every management permission,
// with the tenant, and never again. A manager can hand out only
// permissions it holds itself, so a power no remaining application holds
// is lost for good. The Vault therefore refuses the change that would
// leave a tenant without a full manager: a management application that
// holds every management permission and does not expire. The answer is
// Conflict, naming what to do instead.

// ErrLastManager refuses the change that would leave a tenant without a
// full manager (KeepsAManager).
var ErrLastManager = unit.Errorf(unit.Conflict, "this is the tenant's last management application holding every management "+
	"permission without an expiry; create another one first, or the tenant could no longer be fully managed")

// KeepsAManager fails with ErrLastManager unless, once the application id
// of tenant tid is replaced by changed (nil: deleted), the tenant still
// has a full manager (IsFullManager), as read in t.
func KeepsAManager(t *unit.Tx, tid, id string, changed *ApplicationRecord) error {
	prefix := barrier.Tenant(tid).Records(unit.EntityApplication)
	raws, err := t.ScanValues(prefix)
	if err != nil {
		return err
	}
	for _, kv := range raws {
		rec := changed
		if kv.Rest != id {
			rec = new(ApplicationRecord)
			if err := t.OpenRecord(kv.Key, kv.Raw, rec); err != nil {
				return err
			}
		}
		if rec != nil && IsFullManager(rec) {
			return nil
		}
	}
	return ErrLastManager
}
