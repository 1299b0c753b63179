package tokenvault

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Stored records, each with an encoding of its own.
//
// Every value the Vault stores, other than keyrings (wrapped by the key
// wrapper) and the empty index, registry and schedule entries, is a
// record: an unexported type of its own (recordCodec), defined field by
// field in its file, records_<kind>.go, and not by any exported type's
// JSON tags, so that changing the API never changes what is on disk. The
// API types are converted to and from their records (recordOf, api) in the
// files of those types, so that a record file holds only its format.
// unit.Tx's GetRecord, OpenRecord, PutRecord, GetPlainRecord and PutPlainRecord take
// nothing else, so the compiler holds every stored kind to it.
//
//	records_token.go        tokenRecord        tenant/<tid>/token/<id>
//	records_log.go          logRecord          tenant/<tid>/log/<nanos>/<id>
//	records_application.go  applicationRecord  tenant/<tid>/application/<id>
//	records_proxy.go        proxyRecord        tenant/<tid>/proxy/<id>
//	records_invitation.go   invitationRecord   tenant/<tid>/tenant_invitation/<id>
//	records_tenant.go       tenantRecord       tenant/<tid>/tenant/<tid>
//	records_member.go       memberRecord       tenant/<tid>/tenant_member/<id>
//	records_formula.go      formulaRecord      tenant/<tid>/reactor_formula/<id>, sys/formula/<id>
//	records_reactor.go      reactorRecord      tenant/<tid>/reactor/<id>
//	records_session.go      sessionRecord      tenant/<tid>/session/<id>
//	records_idempotency.go  idempotencyRecord  tenant/<tid>/idempotency/<hmac>
//	records_intent.go       tokenIntentRecord  tenant/<tid>/token_intent/<id>
//	records_webhook.go      webhookRecord      tenant/<tid>/webhook/<id>
//	records_webhook_delivery.go webhookDeliveryRecord tenant/<tid>/webhook_delivery/<webhook>/<id>
//	records_count.go        countRecord        tenant/<tid>/count/..., sys/count/tenants
//	records_keyref.go       keyRef             sys/apikey/, sys/nonce/, sys/invite/, sys/proxy/
//	records_scans.go        legacyCVCScan      sys/cvcscan
//	records_scans.go        listBuild          sys/lists
//	records_fingerprints.go fingerprintPlace   sys/fingerprints
//	records_reseal.go       resealState        sys/reseal/<tid> (plain, not sealed)
//	records_deleting.go     deletionState      sys/deleting/<tid> (plain, not sealed)
//	records_chain.go        chainHead          tenant/<tid>/chain/head
//	records_checkpoint.go   checkpointRecord   tenant/<tid>/chain_checkpoint/<seq>, sys/chain-final/<tid>
//	records_audit_key.go    auditKeyRecord     sys/audit-key/<key id>
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

// errRecord is wrapped by every decoding failure.
var errRecord = errors.New("malformed record")

// recordWords are the strings str encodes as one small number: the values
// the hot records repeat (types, actor kinds, operations, default
// containers and expressions, frequent messages). It is part of format
// version 1 of every record: entries may never change or move, and an
// entry added is a new format version (an older reader cannot decode it).
// TestRecordWords pins it.
var recordWords = [...]string{
	// 0: token types
	TypeToken, TypeCard, TypeBank,
	// 3: actor types
	ActorApplication, ActorUser, ActorSession, ActorSystem, "operator",
	// 8: entity types not already above
	EntityProxy, EntityReactor, EntityReactorFormula, EntityTenant,
	EntityTenantMember, EntityTenantInvitation,
	// 14: operations
	OpCreate, OpRead, OpUpdate, OpDelete, OpInvoke,
	// 19: default containers and fingerprint expressions
	"/general/high/", "/pci/high/", "/bank/high/",
	"{{ data | stringify }}", "{{ data.number }}", "{{ data.account_number }}|{{ data.routing_number }}",
	// 25: frequent log messages
	"Token created", "Token read", "Token updated", "Token deleted", "Token expired",
	"Token read (deduplicated create)", "Token read (listed)", "Token read (searched)",
	"Token detokenized", "Token used by proxy", "Token used by reactor",
	"Card cvc removed (retention)",
}

// wordIndex finds a string among recordWords.
var wordIndex = func() map[string]uint64 {
	m := make(map[string]uint64, len(recordWords))
	for i, w := range recordWords {
		if _, dup := m[w]; !dup {
			m[w] = uint64(i)
		}
	}
	return m
}()

const (
	strLiteral = 0
	strWord    = 1
	strUUID    = 2
)

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// appendStr appends s as a str: a word, a UUID or a literal.
func appendStr(b []byte, s string) []byte {
	if i, ok := wordIndex[s]; ok {
		return binary.AppendUvarint(b, i<<2|strWord)
	}
	if u, ok := barrier.ParseUUID(s); ok {
		b = append(b, strUUID)
		return append(b, u[:]...)
	}
	b = binary.AppendUvarint(b, uint64(len(s))<<2|strLiteral)
	return append(b, s...)
}

func appendTime(b []byte, t time.Time) []byte {
	_, off := t.Zone()
	b = binary.AppendVarint(b, t.Unix())
	b = binary.AppendUvarint(b, uint64(t.Nanosecond()))
	return binary.AppendVarint(b, int64(off))
}

// appendHex appends s, lowercase hex of 1 to 255 bytes, as those bytes,
// and reports false (appending nothing) for anything else.
func appendHex(b []byte, s string) ([]byte, bool) {
	if len(s) == 0 || len(s)%2 != 0 || len(s) > 510 {
		return b, false
	}
	for i := 0; i < len(s); i++ {
		if !isLowerHex(s[i]) {
			return b, false
		}
	}
	b = append(b, byte(len(s)/2))
	for i := 0; i < len(s); i += 2 {
		b = append(b, unhex(s[i])<<4|unhex(s[i+1]))
	}
	return b, true
}

// unhex is the value of a lowercase hex digit.
func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// recordReader decodes a record's plaintext. The first error sticks: later
// reads return zero values, and err reports it.
// appendStrs appends a list of str, counted.
func appendStrs(b []byte, ss []string) []byte {
	b = appendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendStr(b, s)
	}
	return b
}

// strs reads what appendStrs wrote; never nil.
func (r *recordReader) strs() []string {
	ss := make([]string, r.count())
	for i := range ss {
		ss[i] = r.str()
	}
	return ss
}

// binaryRecord returns a reader of the record b after its format version
// byte, or an error when b is of a version other than version. (A b too
// short for the byte leaves the reader's error set.)
func binaryRecord(b []byte, version byte, kind string) (recordReader, error) {
	d := recordReader{b: b}
	if v := d.byte(); v != version && d.err == nil {
		return d, fmt.Errorf("%w: %s format version %d", errRecord, kind, v)
	}
	return d, nil
}

type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", errRecord, what)
	}
	r.b = nil
}

func (r *recordReader) byte() byte {
	if len(r.b) == 0 {
		r.fail("truncated")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *recordReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad uvarint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// next returns the n bytes that follow (aliasing the plaintext).
func (r *recordReader) next(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.fail("truncated")
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// count reads a number of items that each take at least one byte, so a
// hostile count cannot make a large allocation.
func (r *recordReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail("count past the end")
		return 0
	}
	return int(n)
}

// bytes reads a length-prefixed byte string, copied; nil when empty.
func (r *recordReader) bytes() []byte {
	v := r.next(r.uvarint())
	if len(v) == 0 {
		return nil
	}
	return append([]byte(nil), v...)
}

func (r *recordReader) str() string {
	h := r.uvarint()
	switch h & 3 {
	case strLiteral:
		return string(r.next(h >> 2))
	case strWord:
		if i := h >> 2; i < uint64(len(recordWords)) {
			return recordWords[i]
		}
		r.fail("unknown word")
	case strUUID:
		if h == strUUID {
			if v := r.next(16); v != nil {
				return uuid.UUID(v).String()
			}
			return ""
		}
		r.fail("bad uuid header")
	default:
		r.fail("bad string header")
	}
	return ""
}

// hexStr reads what appendHex wrote.
func (r *recordReader) hexStr() string {
	n := uint64(r.byte())
	if n == 0 && r.err == nil {
		r.fail("empty hex")
	}
	return hex.EncodeToString(r.next(n))
}

func (r *recordReader) time() time.Time {
	sec := r.varint()
	nsec := r.uvarint()
	off := r.varint()
	if nsec >= 1e9 || off <= -24*3600 || off >= 24*3600 || sec < minRecordSec || sec > maxRecordSec {
		r.fail("bad time")
	}
	if r.err != nil {
		return time.Time{}
	}
	t := time.Unix(sec, int64(nsec))
	if off == 0 {
		return t.UTC()
	}
	return t.In(time.FixedZone("", int(off)))
}

// The times a record holds are within the years 0 to 9999, the range of
// RFC 3339 and of the JSON records of before.
var (
	minRecordSec = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	maxRecordSec = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
)

// checkRecordTimes refuses, with an errRecord naming what, a time the
// reader (recordReader.time) would refuse: before year 0 or after 9999 in
// UTC, or with an offset of a day or more. Only a record decoded from the
// JSON of format version 0 can hold one (year 0 at +01:00 is year -1 in
// UTC), and it is never written in a record that would not decode: a
// token is written back in version 0 (tokenRecord.appendRecord); an
// application or a log line is refused, so a write to it fails and
// changes nothing, and the re-seal pass seals its JSON again as it is. A
// nil time is skipped.
func checkRecordTimes(what string, times ...*time.Time) error {
	for _, at := range times {
		if at != nil && !recordHolds(*at) {
			return fmt.Errorf("%w: %s time %v out of range", errRecord, what, *at)
		}
	}
	return nil
}

// recordHolds reports whether a record can hold at: within the years 0
// to 9999 in UTC, with an offset of less than a day.
func recordHolds(at time.Time) bool {
	_, off := at.Zone()
	sec := at.Unix()
	return sec >= minRecordSec && sec <= maxRecordSec && off > -24*3600 && off < 24*3600
}

// checkExpiry reports under path an expiry a caller gave that is not after
// now, or that no record holds. RFC 3339 allows 9999-12-31T23:30:00-01:00,
// which is in the year 10000 in UTC: stored, it made the write fail as an
// internal error (an application) or left the token in the JSON of format
// version 0 (a token).
func checkExpiry(at time.Time, now time.Time, path string, fe unit.FieldErrors) {
	switch {
	case !at.After(now):
		fe.Add(path, "must be in the future")
	case !recordHolds(at) || at.UTC().Year() > 9999:
		// The first instant of 10000 is held, but answered in UTC it
		// is no RFC 3339 date-time (json.Marshal refuses it).
		fe.Add(path, "must be before the year 10000 in UTC")
	}
}

// end checks that the whole record was read.
func (r *recordReader) end() error {
	if r.err == nil && len(r.b) > 0 {
		r.fail("trailing bytes")
	}
	return r.err
}

// keyID returns the last segment of a store key: the id of the record.
func keyID(key string) string {
	for i := len(key) - 1; i >= 0; i-- {
		if key[i] == '/' {
			return key[i+1:]
		}
	}
	return key
}
