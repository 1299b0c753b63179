package tokenvault

import (
	"context"
	"fmt"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// RotateFPEKey gives the caller's tenant a new version of its FPE keys,
// under a fresh random secret, and returns its number: FPEEncode and ids
// derived with the fpe filter use it from now on, while every older
// version stays in the keyring, so that FPEDecode with a request's
// KeyVersion still decodes what an older version encoded, and tokens
// whose ids an older version derived keep their ids and read as before.
// Ids are derived from the data, so after a rotation the same data gets
// another id: a token created before it is not a duplicate of one created
// after. The rotation is a line of the tenant's audit log (entity type
// tenant, operation update), and so of its audit chain. Requires
// tenant:update.
//
// Tokens do not record the version that derived their id: an id is looked
// up, never decoded, so it needs none, and the audit line dates the
// change. Other instances sharing the store take the new version within
// barrier.KeyringTTL (5 s), as after RotateDataKey.
//
// Rotate when an FPE key may have been exposed, or on the schedule your
// key management policy sets: a rotation cannot re-encode values held
// outside the vault, so the older versions are kept for good.
//
// Returns Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without tenant:update,
// StorageFull, or Internal.
func (v *Vault) RotateFPEKey(ctx context.Context, key Credential) (version int, err error) {
	v.wrapMu.RLock()
	defer v.wrapMu.RUnlock()
	var rotated *barrier.Keys
	var tid string
	err = v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTenantUpdate)
		if err != nil {
			return err
		}
		tid = p.TenantID
		ks, err := t.TenantKeys(tid, true)
		if err != nil {
			return err
		}
		if rotated, err = ks.RotateFPE(); err != nil {
			return err
		}
		if err := t.PutKeyring(barrier.Tenant(tid).Keyring(), rotated); err != nil {
			return err
		}
		return t.Log(p.Actor(), tid, EntityTenant, tid, OpUpdate, fmt.Sprintf("FPE key rotated to version %d", rotated.FPEVersion()))
	})
	if err != nil {
		return 0, err
	}
	// Only a committed keyring may be used: ids and encodings made under
	// a rolled back version could never be decoded or derived again.
	v.barrier.CacheKeys(tid, rotated)
	return rotated.FPEVersion(), nil
}
