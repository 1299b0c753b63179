package aliases

import (
	"fmt"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// RotateFPEKey writes tenant tid's keyring with a new version of its FPE
// keys, under a fresh random secret, and the line of the tenant's audit
// log that dates it (by, entity type tenant, operation update). It returns
// the rotated keyring, which the caller caches only once the transaction
// has committed: ids and encodings made under a version rolled back could
// never be decoded or derived again.
func RotateFPEKey(t *unit.Tx, by unit.Actor, tid string) (*barrier.Keys, error) {
	ks, err := t.TenantKeys(tid, true)
	if err != nil {
		return nil, err
	}
	rotated, err := ks.RotateFPE()
	if err != nil {
		return nil, err
	}
	if err := t.PutKeyring(barrier.Tenant(tid).Keyring(), rotated); err != nil {
		return nil, err
	}
	if err := t.Log(by, tid, unit.EntityTenant, tid, unit.OpUpdate, fmt.Sprintf("FPE key rotated to version %d", rotated.FPEVersion())); err != nil {
		return nil, err
	}
	return rotated, nil
}
