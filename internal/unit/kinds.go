package unit

import (
	"strings"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// Record kinds. Each feature package declares the families of a tenant's
// keys that hold its records (its RecordKinds); the Vault gathers them at
// Open. What must know every stored record without knowing the features
// (the re-seal pass, which rewrites records of format version 0 in the
// current one) asks the gathered kinds which record a key holds.

// RecordKind is one family of a tenant's keys that holds records of one
// type.
type RecordKind struct {
	// Family is the family's prefix for tenant tid.
	Family func(tid string) barrier.Prefix
	// New returns a new, empty record of the family's type.
	New func() Record
}

// KindOf returns the kind that key, a key of tenant tid, belongs to
// among kinds, and false when it is none of them (an index or schedule
// entry, or the tenant's keyring).
func KindOf(kinds []RecordKind, tid, key string) (RecordKind, bool) {
	for _, k := range kinds {
		if strings.HasPrefix(key, k.Family(tid).String()) {
			return k, true
		}
	}
	return RecordKind{}, false
}
