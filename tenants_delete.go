package tokenvault

import (
	"context"
	"errors"

	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Deleting a tenant removes every key of it from the store: everything
// under tenant/<tid>/, and its entries under sys/ (API, session, nonce,
// invitation and proxy key lookups, expiry and cvc schedule entries, the
// re-seal marker, the registry entry). A tenant may hold millions of keys,
// so the work is done in bounded transactions, and it survives a crash:
//
//  1. One transaction (markDeleting, tenants.MarkDeleting) removes the tenant from the registry,
//     deletes its keyring (from then on nothing of the tenant can be
//     opened: it is crypto-shredded before a single record is removed) and
//     its re-seal marker, and writes sys/deleting/<tid>, the progress of
//     the work. Every key of the tenant is refused from its commit on:
//     authentication reads the marker, and the auth cache and the cached
//     keyring are dropped after the commit, before DeleteTenant goes on.
//  2. Passes of at most tenants.DeleteBatch keys (deleteOnce), each one
//     transaction running tenants.DeletePass, which records its progress
//     in the marker: first everything under tenant/<tid>/, then the sys/
//     lookups whose sealed access.KeyRef names the tenant, then the
//     schedule entries naming it.
//  3. A last pass checks that nothing is left under tenant/<tid>/ (a call
//     that authenticated just before the mark may have written there; the
//     work then starts over) and removes the marker.
//
// DeleteTenant runs all of it; Sweep (and so the background sweeper, which
// also runs it as soon as Open starts it) finishes any deletion a crash or
// a cancelled call left behind.

// errTenantGone is what reading a tenant whose keyring is gone (a tenant
// being deleted) returns.
var errTenantGone = &Error{Kind: NotFound, Message: "tenant not found"}

// DeleteTenant removes tenant id with all of its data: records, indexes,
// audit logs, keyring, and its API key, session, nonce, invitation link and
// proxy key lookups and schedule entries. From the first of its
// transactions on, every key of the tenant is refused (Unauthenticated),
// in this process at once; the data is then removed in transactions of at
// most 500 keys. It returns when nothing of the tenant is left. If it is
// interrupted (ctx, a crash, a store failure), the tenant stays refused and
// [Vault.Sweep] (the background sweeper, started by Open) finishes the
// work; calling DeleteTenant again does too.
//
// It takes no key: it is a host-program (operator) operation, as
// CreateTenant is. Nothing is written to the tenant's audit log, which is
// deleted with it; the host should record who deleted what. Its first
// transaction signs the tenant's audit chain head in a final checkpoint
// (SignAuditChain), kept after the tenant is gone, sealed by the system
// keyring, and queued for audit export: the proof of where its trail
// ended.
//
// Returns NotFound if no tenant (and no unfinished deletion) has this id,
// and StorageFull or Internal when a transaction fails: what was deleted
// stays deleted, the tenant stays refused, and Sweep or another call
// finishes.
func (v *Vault) DeleteTenant(ctx context.Context, id string) error {
	if !unit.ValidID(id) {
		return unit.NotFoundError("tenant")
	}
	// Its lines are linked first where this instance may (chain_linker.go),
	// so that the final checkpoint covers them; a line another instance's
	// linker has yet to link is deleted with the tenant unlinked.
	if err := v.linkNow(ctx); err != nil {
		return err
	}
	if err := v.markDeleting(ctx, id); err != nil {
		return err
	}
	return v.finishDeletion(ctx, id)
}

// markDeleting is the first transaction of a deletion. A tenant already
// being deleted is left as it is.
func (v *Vault) markDeleting(ctx context.Context, tid string) error {
	err := v.update(ctx, func(t *txn) error {
		// The chain's last word, while its keyring still opens it
		// (checkpoints.go).
		return tenants.MarkDeleting(t.Tx, tid, func() error { return t.signFinalCheckpoint(tid) })
	})
	// Dropped whether or not the commit succeeded (a backend may fail
	// after writing): a keyring is read again when needed.
	v.barrier.ForgetKeys(tid)
	return err
}

// finishDeletion runs the batches of tenant tid's deletion until its
// marker is gone.
func (v *Vault) finishDeletion(ctx context.Context, tid string) error {
	// The tenant's subject keys go first (docs/erasure.md): the tenant is
	// refused already, and a retry deletes what is left.
	if v.subjectKeys != nil {
		if err := v.subjectKeys.DeleteTenant(ctx, tid); err != nil {
			return v.result(err)
		}
	}
	for {
		done, err := v.deleteOnce(ctx, tid)
		if err != nil || done {
			return err
		}
	}
}

// finishDeletions finishes every tenant deletion left unfinished, and
// returns how many it finished (and the errors of those it could not).
func (v *Vault) finishDeletions(ctx context.Context) (int, error) {
	var tids []string
	err := v.view(ctx, func(t *txn) error {
		var err error
		tids, err = tenants.Unfinished(t.Tx)
		return err
	})
	if err != nil {
		return 0, err
	}
	finished := 0
	var errs []error
	for _, tid := range tids {
		// One deletion failing does not hold up the others.
		if err := v.finishDeletion(ctx, tid); err != nil {
			errs = append(errs, err)
			continue
		}
		finished++
		if v.fingerprints != nil {
			v.fingerprints.DropTenant(tid)
		}
		v.logger.Info("tokenvault: finished deleting a tenant", "tenant_id", tid)
	}
	return finished, errors.Join(errs...)
}

// deleteOnce runs one batch of tenant tid's deletion in one transaction. It
// reports true when the deletion is complete (the marker is gone).
func (v *Vault) deleteOnce(ctx context.Context, tid string) (done bool, err error) {
	// The tenant's appended lines are in the store, to be deleted with
	// the rest (appends.go).
	if err := v.foldAppends(ctx); err != nil {
		return false, err
	}
	err = v.update(ctx, func(t *txn) error {
		done, err = tenants.DeletePass(t.Tx, tid)
		return err
	})
	return done, err
}
