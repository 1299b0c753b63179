package unit

import (
	"errors"
	"syscall"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// The store's conditions that the Vault answers with kinds of their own
// (StorageFull, Unprocessable), as the layers above the unit of work meet
// them, so that they need not import the barrier.

// IsStorageFull reports whether err says the store's storage is full: a
// write the store refused for lack of space (barrier.ErrFull, which the
// backends wrap around ENOSPC, EDQUOT and PostgreSQL's disk_full; or a
// bare ENOSPC from a store that does not wrap it).
func IsStorageFull(err error) bool {
	return errors.Is(err, barrier.ErrFull) || errors.Is(err, syscall.ENOSPC)
}

// ErrNoSnapshot is in the chain of the error of a backup of a store that
// cannot write a consistent snapshot while it serves (the barrier's
// Backup).
var ErrNoSnapshot = barrier.ErrNoSnapshot
