package tokenvault

import (
	"github.com/tokenvault/tokenvault/internal/access"
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

var errLastManager = unit.Errorf(Conflict, "this is the tenant's last management application holding every management "+
	"permission without an expiry; create another one first, or the tenant could no longer be fully managed")

// keepsAManager fails with errLastManager unless, once the application id
// is replaced by changed (nil: deleted), the tenant still has a full
// manager.
func (t *txn) keepsAManager(tid, id string, changed *access.ApplicationRecord) error {
	prefix := barrier.Tenant(tid).Records(EntityApplication)
	raws, err := t.ScanValues(prefix)
	if err != nil {
		return err
	}
	for _, kv := range raws {
		rec := changed
		if kv.Rest != id {
			rec = new(access.ApplicationRecord)
			if err := t.OpenRecord(kv.Key, kv.Raw, rec); err != nil {
				return err
			}
		}
		if rec != nil && access.IsFullManager(rec) {
			return nil
		}
	}
	return errLastManager
}
