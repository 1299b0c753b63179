package tokenvault

import (
	"context"
	"errors"
	"syscall"

	"github.com/tokenvault/tokenvault/store"
)

// A full disk.
//
// A write the store refuses for lack of space (store.ErrFull, which the
// backends wrap around ENOSPC, EDQUOT and PostgreSQL's disk_full; or a
// bare ENOSPC from a store that does not wrap it) is answered StorageFull,
// not Internal: the caller learns that nothing was saved and that trying
// again later may work, and over HTTP it is 507 in problem+json. Like any
// failed write it leaves nothing behind (the store rolls it back).
//
// The Vault remembers it (storageFull) until a write commits, so that
// Ready, the readiness probe, fails while writes fail: a load balancer then
// sends the traffic elsewhere. Since a Vault taken out of rotation may get
// no writes, Ready itself tries one while the flag is set: a small
// transaction that writes a key and deletes it (readyProbeKey, never left
// in the store). When space is freed the probe, or any other write,
// commits and clears the flag: no restart is needed, and nothing was lost.

// storageFull reports whether err says the store's storage is full.
func storageFull(err error) bool {
	return errors.Is(err, store.ErrFull) || errors.Is(err, syscall.ENOSPC)
}

// fullError is the StorageFull error for a store error err, and marks the
// Vault as unable to write until a write commits. The transition is logged
// once, not every refused write.
func (v *Vault) fullError(err error) *Error {
	if v.storageFull.CompareAndSwap(false, true) {
		v.logger.Error("tokenvault: the store's storage is full: writes fail until space is freed", "err", err)
	}
	return &Error{Kind: StorageFull, Message: "storage is full: nothing was saved; try again once the server has room", Err: err}
}

// Ready reports whether the Vault can serve requests, for a readiness
// probe: nil when its store answers a read and, after a write failed for
// a full storage, a write commits again. It returns StorageFull while the
// storage is full, and Internal when the store does not answer (within
// ctx's deadline: the caller bounds it).
func (v *Vault) Ready(ctx context.Context) error {
	if v.storageFull.Load() {
		if err := v.probeWrite(ctx); err != nil {
			return err
		}
	}
	_, err := v.HasTenants(ctx)
	return err
}

// probeWrite commits a transaction that writes readyProbeKey and deletes
// it, which a full store refuses; on success the Vault can write again.
func (v *Vault) probeWrite(ctx context.Context) error {
	err := v.store.Update(ctx, func(tx store.Tx) error {
		k := []byte(readyProbeKey.s)
		if err := tx.Put(k, nil); err != nil {
			return err
		}
		return tx.Delete(k)
	})
	if err != nil {
		return v.result(err)
	}
	v.storageFull.Store(false)
	return nil
}
