package tokenvault

import "slices"

// A tenant is managed only through its management applications: the host
// program creates the first one with the tenant and never again. So the
// Vault refuses the change that would leave a tenant with no live
// management application able to create applications, the one power from
// which every other can be given back. The answer is Conflict, naming
// what to do instead.

var errLastManager = errorf(Conflict, "this is the tenant's last management application holding application:create; "+
	"create another one first, or the tenant can no longer be managed")

// keepsAManager fails with errLastManager unless, once the application id
// is replaced by changed (nil: deleted), the tenant still has a management
// application, not expired, that holds application:create.
func (t *txn) keepsAManager(tid, id string, changed *applicationRecord) error {
	prefix := recordPrefix(tid, EntityApplication)
	raws, err := t.scanValues(prefix)
	if err != nil {
		return err
	}
	for _, kv := range raws {
		rec := changed
		if kv.key[len(prefix):] != id {
			rec = new(applicationRecord)
			if err := t.openRecord(kv.key, kv.value, rec); err != nil {
				return err
			}
		}
		if rec != nil && isManager(rec, t) {
			return nil
		}
	}
	return errLastManager
}

func isManager(rec *applicationRecord, t *txn) bool {
	return rec.Type == Management && !rec.expired(t.now) && slices.Contains(rec.Permissions, PermApplicationCreate)
}
