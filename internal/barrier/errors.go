package barrier

import "github.com/tokenvault/tokenvault/store"

// The store's sentinel errors, as the features above the barrier meet
// them, so that they need not import package store.
var (
	// ErrStop ends a scan early when a scan's function returns it (Tx.Scan
	// and friends); the scan then returns nil.
	ErrStop = store.ErrStop
	// ErrFull is in the chain of an error of a store whose storage is full
	// (no space left, over quota).
	ErrFull = store.ErrFull
)
