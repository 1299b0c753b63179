package tokenvault

import (
	"context"
	"errors"
	"io"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

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
	if errors.Is(err, barrier.ErrNoSnapshot) {
		return ErrNoSnapshot
	}
	if err != nil {
		return v.result(err)
	}
	return nil
}
