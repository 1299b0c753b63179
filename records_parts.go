package tokenvault

import (
	"encoding/binary"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/idempotency"
	"github.com/tokenvault/tokenvault/internal/intents"
	"github.com/tokenvault/tokenvault/internal/reactors"
	"github.com/tokenvault/tokenvault/internal/sessions"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/tokens"
)

// Parts shared by the records of format version 1 written since every
// stored kind has a record of its own (records_<kind>.go, or
// record_<kind>.go in its feature's package), on top of the primitives of
// records.go:
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

// ptr is a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }

// appendUvarint is binary.AppendUvarint, short for the records' code.
func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// tenantRecordKind is the family of keys of tenant tid that hold records
// of one kind, and a new record of that kind.
type tenantRecordKind struct {
	prefix barrier.Prefix
	zero   func() recordCodec
}

// tenantRecordKinds are the families of tid's keys that hold records
// (keyspace.go): the re-seal pass (reseal.go) writes any it finds in the
// JSON of format version 0 in the current version. Everything else under
// the tenant is an index or schedule entry (empty) or its keyring.
func tenantRecordKinds(tid string) []tenantRecordKind {
	return []tenantRecordKind{
		{barrier.Tenant(tid).Records(kindToken), func() recordCodec { return &tokens.Record{} }},
		{barrier.Tenant(tid).Logs(), func() recordCodec { return &auditlog.LineRecord{} }},
		{barrier.Tenant(tid).Records(EntityApplication), func() recordCodec { return &access.ApplicationRecord{} }},
		{barrier.Tenant(tid).Records(EntityProxy), func() recordCodec { return &reactors.ProxyRecord{} }},
		{barrier.Tenant(tid).Records(EntityTenantInvitation), func() recordCodec { return &tenants.InvitationRecord{} }},
		{barrier.Tenant(tid).Records(EntityTenant), func() recordCodec { return &tenants.Record{} }},
		{barrier.Tenant(tid).Records(EntityTenantMember), func() recordCodec { return &tenants.MemberRecord{} }},
		{barrier.Tenant(tid).Records(EntityReactorFormula), func() recordCodec { return &reactors.FormulaRecord{} }},
		{barrier.Tenant(tid).Records(EntityReactor), func() recordCodec { return &reactors.Record{} }},
		{barrier.Tenant(tid).Records(EntitySession), func() recordCodec { return &sessions.Record{} }},
		{barrier.Tenant(tid).Records(kindIdempotency), func() recordCodec { return &idempotency.Record{} }},
		{barrier.Tenant(tid).Records("count"), func() recordCodec { return &countRecord{} }},
		{barrier.Tenant(tid).TokenIntents(), func() recordCodec { return &intents.Record{} }},
		{barrier.Tenant(tid).Records(EntityWebhook), func() recordCodec { return &events.Webhook{} }},
		{barrier.Tenant(tid).Records(barrier.KindWebhookDelivery), func() recordCodec { return &events.Delivery{} }},
	}
}
