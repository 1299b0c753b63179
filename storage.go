package tokenvault

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"time"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// A full disk.
//
// A write the store refuses for lack of space (unit.IsStorageFull: the
// backends' ENOSPC, EDQUOT and PostgreSQL's disk_full) is answered
// StorageFull, not Internal: the caller learns that nothing was saved and that trying
// again later may work, and over HTTP it is 507 in problem+json. Like any
// failed write it leaves nothing behind (the store rolls it back).
//
// The Vault remembers it (storageFull), so that Ready, the readiness
// probe, fails while writes fail: a load balancer then sends the traffic
// elsewhere. Ready clears it only when a write of its own commits: one of
// readyProbeBytes of random bytes, then its deletion, in two commits. The
// size matters: near a full disk a small commit can still fit in the
// pages the store freed before while every token write fails (measured on
// a full tmpfs: after the first refused token write, the next 50 failed
// while a commit writing and deleting one key in one transaction
// succeeded), so a tiny probe would call the Vault ready when it is not.
// Random bytes, so that a compressing store (PostgreSQL's TOAST) stores
// all of them. Any other write that commits meanwhile does not clear it,
// for the same reason. The probe also runs when the Vault gets no traffic
// (taken out of rotation), so the instance comes back by itself once space
// is freed: no restart, and nothing was lost.

// storageFullRetryAfter is the Error.RetryAfter of StorageFull (over HTTP
// the Retry-After header of the 507): about how long an operator's alert,
// or a volume that grows by itself, takes to make room. A client that
// retries sooner only finds the storage still full; one that waits longer
// loses nothing, since nothing of the call was saved.
const storageFullRetryAfter = time.Minute

// readyProbeBytes is the size of Ready's write while the storage is full:
// more than a token write needs (a few pages), so that a Vault called
// ready can take writes.
const readyProbeBytes = 64 << 10

// fullError is the StorageFull error for a store error err, and marks the
// Vault as unable to write until Ready's probe commits. The transition is
// logged, not every refused write.
func (v *Vault) fullError(err error) *Error {
	if v.storageFull.CompareAndSwap(false, true) {
		v.logger.Error("tokenvault: the store's storage is full: writes fail until space is freed", "err", err)
	}
	return &Error{Kind: StorageFull, Message: "storage is full: nothing was saved; try again once the server has room", Err: err, RetryAfter: storageFullRetryAfter}
}

// Ready reports whether the Vault can serve requests, for a readiness
// probe: nil when its store answers a read and, after a write failed for
// a full storage, a write of its own commits again (see above). It returns
// StorageFull while the storage is full, and Internal when the store does
// not answer (within ctx's deadline: the caller bounds it).
func (v *Vault) Ready(ctx context.Context) error {
	if v.storageFull.Load() {
		if err := v.probeWrite(ctx); err != nil {
			return err
		}
	}
	_, err := v.HasTenants(ctx)
	return err
}

// probeWrite writes readyProbeBytes of random bytes at readyProbeKey and
// deletes them, in two commits; when both commit the Vault can write
// again. A deletion that fails leaves the key, which the next probe
// overwrites and deletes.
func (v *Vault) probeWrite(ctx context.Context) error {
	value := make([]byte, readyProbeBytes)
	rand.Read(value)
	if err := v.barrier.ProbeWrite(ctx, value); err != nil {
		return v.result(err)
	}
	if v.storageFull.CompareAndSwap(true, false) {
		v.logger.Info("tokenvault: the store takes writes again")
	}
	return nil
}

// ErrNoSnapshot is what Backup returns when the store cannot take a
// snapshot (it does not implement [github.com/tokenvault/tokenvault/store.Snapshotter]: PostgreSQL, whose
// backups are pg_dump's or pg_basebackup's). Its kind is Unprocessable.
var ErrNoSnapshot = &Error{Kind: Unprocessable, Message: "this store cannot write a snapshot; back it up with its own tools (PostgreSQL: pg_dump or pg_basebackup)"}

// Backup writes a consistent snapshot of the whole store to w while the
// Vault keeps serving: every write acknowledged before Backup began is in
// it, none begun after. With store/bolt (the default) the snapshot is a
// bbolt file: open it with bolt.Open (or as Options.Path) and the master key
// the store had when the backup was taken (keep older master keys after a
// rotation, or pass them as PreviousMasterKeys).
//
// The snapshot is exactly as encrypted as the store: every tenant value is
// sealed with its tenant's data keys, which are wrapped by the master key;
// the master key itself is never in the store, so never in a backup. Keep
// backups and master key apart.
//
// It takes no key: it is an operator operation. Returns ErrNoSnapshot
// (Unprocessable) when the store cannot snapshot, and Internal when the
// store or w fails (w then holds a partial copy: write to a temporary file
// and keep it only when Backup returns nil).
func (v *Vault) Backup(ctx context.Context, w io.Writer) error {
	err := v.barrier.Backup(ctx, w)
	if errors.Is(err, unit.ErrNoSnapshot) {
		return ErrNoSnapshot
	}
	if err != nil {
		return v.result(err)
	}
	return nil
}
