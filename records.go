package tokenvault

import (
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Stored records, each with an encoding of its own.
//
// Every value the Vault stores, other than keyrings (wrapped by the key
// wrapper) and the empty index, registry and schedule entries, is a
// record: a type of its own (recordCodec), defined field by field in its
// file, in the package of the feature that owns it (internal/<feature>,
// record_<kind>.go) or, for what no feature owns yet, in the root
// (records_<kind>.go), and not by any exported type's JSON tags, so that
// changing the API never changes what is on disk. The API types are
// converted to and from their records (recordOf, and <kind>Of such as
// tokenOf) in the root's files of those types, so that a record file
// holds only its format.
// unit.Tx's GetRecord, OpenRecord, PutRecord, GetPlainRecord and PutPlainRecord take
// nothing else, so the compiler holds every stored kind to it.
//
//	internal/tokens         Record             tenant/<tid>/token/<id>
//	internal/auditlog       LineRecord         tenant/<tid>/log/<nanos>/<id>
//	internal/access         ApplicationRecord  tenant/<tid>/application/<id>
//	internal/reactors       ProxyRecord        tenant/<tid>/proxy/<id>
//	internal/tenants        InvitationRecord   tenant/<tid>/tenant_invitation/<id>
//	internal/tenants        Record             tenant/<tid>/tenant/<tid>
//	internal/tenants        MemberRecord       tenant/<tid>/tenant_member/<id>
//	internal/reactors       FormulaRecord      tenant/<tid>/reactor_formula/<id>, sys/formula/<id>
//	internal/reactors       Record             tenant/<tid>/reactor/<id>
//	internal/sessions       Record             tenant/<tid>/session/<id>
//	internal/idempotency    Record             tenant/<tid>/idempotency/<hmac>
//	internal/intents        Record             tenant/<tid>/token_intent/<id>
//	internal/events         Webhook            tenant/<tid>/webhook/<id>
//	internal/events         Delivery           tenant/<tid>/webhook_delivery/<webhook>/<id>
//	internal/counts         Record             tenant/<tid>/count/..., sys/count/tenants
//	internal/access         KeyRef             sys/apikey/, sys/nonce/, sys/invite/, sys/proxy/
//	internal/tokens         LegacyCVCScan      sys/cvcscan
//	internal/tokens         ListBuild          sys/lists
//	internal/tokens         FingerprintPlace   sys/fingerprints
//	records_reseal.go       resealState        sys/reseal/<tid> (plain, not sealed)
//	internal/tenants        DeletionState      sys/deleting/<tid> (plain, not sealed)
//	internal/auditlog       Head, Link         tenant/<tid>/chain/head, tenant/<tid>/chain_link/...
//	internal/auditlog       CheckpointRecord   tenant/<tid>/chain_checkpoint/<seq>, sys/chain-final/<tid>
//	internal/auditlog       KeyRecord          sys/audit-key/<key id>
//
// Every record is a compact binary form whose first byte is its format
// version (1 for all today). The JSON written before these formats
// existed (format version 0: of the exported type, or of the struct then
// passed to putRecord; token intents came after and have none) starts with '{' (0x7b), which no version byte
// uses, so both still read: each record's decodeRecord reads version 0
// through a type that spells its JSON as it was (<kind>V0). A record in
// the old form is rewritten in the new one on its next write, and a
// tenant's records by the re-seal pass (reseal.go, tenantRecordKinds);
// sys/ records are read as they are until written again. Golden fixtures
// in testdata/records pin every version's bytes, version 0 included
// (written by the code of before): records_test.go,
// records_application_test.go and records_kinds_test.go, with FuzzRecords
// and FuzzRecordKinds; TestStoreIsSealed holds every value of a store to
// its family's record in the current version.
//
// The encoding is append-style, like encoding/binary's Append functions:
//
//	uvarint        unsigned LEB128 (binary.AppendUvarint)
//	varint         zigzag LEB128 (binary.AppendVarint)
//	bytes          uvarint length, then the bytes
//	str            uvarint h, then: h&3 == 0: a literal of h>>2 bytes;
//	               h&3 == 1: entry h>>2 of recordWords (no bytes follow);
//	               h&3 == 2: a canonical lowercase UUID as its 16 bytes
//	time           varint Unix seconds (years 0 to 9999), uvarint
//	               nanoseconds (< 1e9), varint zone offset in seconds
//	               (0 is UTC)
//
// Decoding never panics and never trusts a length: a record that does not
// parse is an internal error naming its key (FuzzRecords).

// recordCodec is a stored record with its own encoding (unit.Record).
type recordCodec = unit.Record
