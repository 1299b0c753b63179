// Package records_test holds the record tests that need a Vault, through
// its public methods (internal/vaulttest) and, for what none shows (its
// unit of work, a halfway tenant deletion, the API's views of records),
// internal/testseam: stores written in the JSON of format version 0 read
// as before and are rewritten, every value in the store is sealed, the
// API types' fields are the records'. They sit apart from internal/records,
// whose unit tests (the codecs' golden, round-trip and fuzz tests) import
// no Vault: a directory holding both would compile the root into the
// records' fuzz build.
package records_test

import (
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// recordCodec is a stored record with its own encoding (unit.Record).
type recordCodec = unit.Record

var recordCmp = []cmp.Option{cmpopts.EquateEmpty()}
