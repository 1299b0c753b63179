package aliases

import (
	"fmt"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// RotateFPEKey writes tenant tid's keyring with a new version of its FPE
// keys, under a fresh random secret, and the line of the tenant's audit
// log that dates it (by, entity type tenant, operation update). It returns
// the new version, and hands the rotated keyring to cache only once the
// transaction has committed: ids and encodings made under a version rolled
// back could never be decoded or derived again.
func RotateFPEKey(t *unit.Tx, by unit.Actor, tid string, cache KeyCache) (version int, err error) {
	ks, err := t.TenantKeys(tid, true)
	if err != nil {
		return 0, err
	}
	rotated, err := ks.RotateFPE()
	if err != nil {
		return 0, err
	}
	if err := t.PutKeyring(barrier.Tenant(tid).Keyring(), rotated); err != nil {
		return 0, err
	}
	if err := t.Log(by, tid, unit.EntityTenant, tid, unit.OpUpdate, fmt.Sprintf("FPE key rotated to version %d", rotated.FPEVersion())); err != nil {
		return 0, err
	}
	t.AfterCommit(func() { cache.CacheKeys(tid, rotated) })
	return rotated.FPEVersion(), nil
}

// KeyCache keeps tenants' keyrings for this instance (the Vault's
// barrier): a rotation is cached once committed, so this instance uses
// the new version at once, others within barrier.KeyringTTL.
type KeyCache interface {
	CacheKeys(tid string, ks *barrier.Keys)
}
