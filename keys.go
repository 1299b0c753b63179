package tokenvault

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/reseal"
)

// keyWrapping is the barrier's view of the Vault's key wrappers: the
// current ones, which RotateKeyWrapper replaces.
type keyWrapping struct{ v *Vault }

func (k keyWrapping) WrapKeys(ctx context.Context, storeKey string, b []byte) ([]byte, error) {
	return k.v.wrappers.Load().wrap(ctx, storeKey, b)
}

func (k keyWrapping) UnwrapKeys(ctx context.Context, storeKey string, raw []byte) ([]byte, error) {
	return k.v.wrappers.Load().unwrap(ctx, storeKey, raw)
}

// RotateMasterKey re-wraps every keyring in the store, and every
// checkpoint signing key (AuditKeys), with newKey, in one
// transaction, and makes it the current master key (a local KeyWrapper).
// Records are not re-encrypted: they are sealed with data keys, which do
// not change. The Vault keeps serving throughout; after RotateMasterKey
// returns, open the store with newKey (the old key may be passed in
// PreviousMasterKeys, for instances not yet restarted). A Vault whose
// KeyWrapper is an HSM or KMS moves back to a local key this way.
//
// This is a host-program operation: it takes no API key. Returns Invalid
// when newKey is not 32 bytes, else StorageFull or Internal when the
// rotation fails.
func (v *Vault) RotateMasterKey(ctx context.Context, newKey []byte) error {
	next, err := NewLocalKeyWrapper(newKey)
	if err != nil {
		return &Error{Kind: Invalid, Message: "the new master key is invalid: " + err.Error()}
	}
	return v.RotateKeyWrapper(ctx, next)
}

// RotateKeyWrapper re-wraps every keyring in the store (the system
// keyring and every tenant's), and the private part of every checkpoint
// signing key (AuditKeys), with next, in one transaction, and makes
// next the current key wrapper; the wrappers before it still unwrap in
// this Vault. next may be a new key or key version of the same kind of
// wrapper, or another kind: a local master key to an HSM (keywrap/pkcs11)
// or a KMS (keywrap/kms), and back. Keyrings wrapped by a bare master key
// before key wrappers existed are re-wrapped too. Records are not
// re-encrypted.
//
// The Vault keeps serving throughout: writes that wrap a keyring (a new
// tenant, a data key rotation) wait for the rotation. If it fails, nothing
// changed; running it again is harmless, so a crash at any point is
// recovered by opening with both wrappers (KeyWrapper next,
// PreviousKeyWrappers the old one) and rotating again. After it returns,
// open the store with next.
//
// This is a host-program operation: it takes no API key.
//
// Returns Invalid for a nil wrapper or one whose kind is not 1 to 32 bytes,
// StorageFull, or Internal (wrapping what the old or new wrapper failed
// with); nothing changed then.
func (v *Vault) RotateKeyWrapper(ctx context.Context, next KeyWrapper) error {
	if next == nil {
		return &Error{Kind: Invalid, Message: "the new key wrapper is nil"}
	}
	if k := next.Kind(); k == "" || len(k) > maxKindLen {
		return &Error{Kind: Invalid, Message: "the new key wrapper's kind must be 1 to 32 bytes"}
	}
	v.wrapMu.Lock()
	defer v.wrapMu.Unlock()
	ws := v.wrappers.Load().then(next)
	err := v.barrier.Keyring(ctx, true, func(tx *barrier.Tx) error {
		err := tx.Keyrings(func(key barrier.Key, raw []byte) error {
			b, err := ws.unwrap(ctx, key.String(), raw)
			if err != nil {
				return err
			}
			w, err := ws.wrap(ctx, key.String(), b)
			if err != nil {
				return err
			}
			return tx.PutWrapped(key, w)
		})
		if err != nil {
			return err
		}
		// The checkpoint signing keys follow the keyrings (audit_keys.go).
		return rewrapAuditKeys(ctx, tx, ws)
	})
	if err != nil {
		return v.result(err)
	}
	v.wrappers.Store(ws)
	return nil
}

// WrappedKeys counts the store's keyrings (the system keyring and every
// tenant's) by the wrapper kind, key id and version that wrapped them,
// read from their envelopes without unwrapping anything: after a rotation,
// every keyring should be under the new wrapper. Sorted by kind, key id,
// version. This is a host-program operation: it takes no API key.
//
// Returns Internal when the store cannot be read or an envelope cannot be
// parsed.
func (v *Vault) WrappedKeys(ctx context.Context) ([]WrappedKeyCount, error) {
	counts := map[WrappedKeyCount]int{}
	err := v.barrier.Keyring(ctx, false, func(tx *barrier.Tx) error {
		return tx.Keyrings(func(key barrier.Key, raw []byte) error {
			w, legacy, err := unmarshalEnvelope(raw)
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			counts[WrappedKeyCount{Kind: w.Kind, KeyID: w.KeyID, Version: w.Version, Legacy: legacy}]++
			return nil
		})
	})
	if err != nil {
		return nil, v.result(err)
	}
	out := make([]WrappedKeyCount, 0, len(counts))
	for c, n := range counts {
		c.Count = n
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b WrappedKeyCount) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.KeyID, b.KeyID), cmp.Compare(a.Version, b.Version), cmpBool(a.Legacy, b.Legacy))
	})
	return out, nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// RotateDataKey adds a new data key to the caller's tenant keyring: records
// written from now on are sealed with it, and records sealed with older
// terms still open until Reseal (run by the background sweeper) has sealed
// them again with the new one. Requires tenant:update.
//
// Returns Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without tenant:update,
// StorageFull, or Internal.
func (v *Vault) RotateDataKey(ctx context.Context, key Credential) error {
	v.wrapMu.RLock()
	defer v.wrapMu.RUnlock()
	var rotated *barrier.Keys
	var tid string
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTenantUpdate)
		if err != nil {
			return err
		}
		tid = p.TenantID
		ks, err := t.TenantKeys(tid, true)
		if err != nil {
			return err
		}
		rotated, err = ks.Rotate()
		if err != nil {
			return err
		}
		if err := t.PutKeyring(barrier.Tenant(tid).Keyring(), rotated); err != nil {
			return err
		}
		if err := reseal.Schedule(t.Tx, tid, t.v.auth.SingleProcess()); err != nil {
			return err
		}
		return t.Log(p.Actor(), tid, EntityTenant, tid, OpUpdate, fmt.Sprintf("Data key rotated to term %d", rotated.Ring().ActiveTerm()))
	})
	if err != nil {
		return err
	}
	// Only a committed keyring may seal: a rolled back term would leave
	// records nobody can open.
	v.barrier.CacheKeys(tid, rotated)
	return nil
}
