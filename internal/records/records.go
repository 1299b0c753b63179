// Package records gathers the stored record kinds of every feature: the
// registry the re-seal pass (internal/reseal) walks to write the records
// it finds in the JSON of format version 0 in the current version. The
// root's Open calls Kinds once.
//
// Its tests hold the stored formats to the golden fixtures of
// testdata/records, round trips, corruptions and fuzzing (FuzzRecords,
// FuzzRecordKinds). They import feature packages only, never the root, so
// that a fuzz build of this package compiles what it tests and no more;
// the tests that need a Vault (legacy stores read through the API, every
// stored value sealed) are in internal/records/behaviour.
//
// # The parts of format version 1
//
// Each stored kind has a record of its own (record_<kind>.go in its
// feature's package), on top of the primitives of internal/unit's
// codec.go and these shared parts:
//
//	list      uvarint 0 for a nil list, else n+1, then the n items: a nil
//	          list and an empty one are both kept, since the JSON of
//	          version 0 told them apart (null and []) and some of it is
//	          hashed or answered again (grantsDigest, the API's lists)
//	strs0     a list of str
//	rules     (access.AppendRules) a list of access rules, each: str description, varint
//	          priority, str container, a list of conditions (str
//	          attribute, str operator, str value), str transform, strs0
//	          permissions
//	json      bytes: the JSON of a free-form value (a configuration),
//	          "null" for nil, decoded as encoding/json decodes into any
//	flags     uvarint of bits, one per optional field or boolean; a bit
//	          this code does not know is refused
//	optime    a time, present when its flag is set
//
// docs/internals.md, "Stored records", lists every kind and where it is
// stored.
package records

import (
	"slices"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/approvals"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/counts"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/export"
	"github.com/tokenvault/tokenvault/internal/idempotency"
	"github.com/tokenvault/tokenvault/internal/intents"
	"github.com/tokenvault/tokenvault/internal/reactors"
	"github.com/tokenvault/tokenvault/internal/sessions"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Kinds returns the families of a tenant's keys that hold records,
// gathered from the feature packages (each one's RecordKinds): the
// re-seal pass writes any it finds in the JSON of format version 0 in the
// current version. Everything else under the tenant is an index or
// schedule entry (empty) or its keyring.
func Kinds() []unit.RecordKind {
	return slices.Concat(tokens.RecordKinds, auditlog.RecordKinds, access.RecordKinds, reactors.RecordKinds,
		tenants.RecordKinds, sessions.RecordKinds, idempotency.RecordKinds, intents.RecordKinds, events.RecordKinds,
		counts.RecordKinds, approvals.RecordKinds, export.RecordKinds)
}
