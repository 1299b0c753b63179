package records

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/sessions"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Golden records. TOKENVAULT_UPDATE_RECORDS=1 writes the fixtures of the
// current format versions again, which is only right for a new version
// (with a new file name): a fixture of a released version never changes.

const fixLog = "0190f5a2-9000-7000-8000-000000000009"

// fixedCard is the record of testdata/records/token-v0.json and
// token-v1.bin: a card with every field set.
func fixedCard() *tokens.Record {
	exp := fixTime.Add(24 * time.Hour)
	mod := fixTime.Add(time.Hour)
	at := fixTime
	return &tokens.Record{
		ID: fixToken, TenantID: fixTenant, Type: "card",
		Fingerprint:           "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		FingerprintExpression: "{{ data.number }}",
		Containers:            []string{"/pci/", "/general/"},
		Metadata:              map[string]string{"customer": "c-42", "plan": "gold"},
		SearchIndexes:         []string{"{{ data.number | last4 }}"},
		DeduplicateToken:      true, ExpiresAt: &exp,
		CreatedBy: fixActor, CreatedAt: fixTime,
		ModifiedBy: "0190f5a2-8c1e-7b3a-9d4e-000000000003", ModifiedAt: &mod,
		Data:           json.RawMessage(`{"number":"4242424242424242","expiration_month":12,"expiration_year":2031,"cvc":"123"}`),
		Mask:           json.RawMessage(`{"number":"XXXXXXXXXXXX4242","expiration_month":12,"expiration_year":2031}`),
		MaskExpression: json.RawMessage(`{"number":"{{ data.number | reveal_last(4) }}","expiration_month":"{{ data.expiration_month }}","expiration_year":"{{ data.expiration_year }}"}`),
		CVCAt:          &at,
		Indexes: []string{
			barrier.Tenant(fixTenant).Expiry(exp, tokens.Kind, fixToken).String(),
			barrier.Tenant(fixTenant).CVCDue(at, fixToken).String(),
			"tenant/" + fixTenant + "/idx/fp/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08/" + fixToken,
			"tenant/" + fixTenant + "/idx/meta/0a1b/" + fixToken,
		},
	}
}

// fixedAliasCard is fixedCard with an id drawn from an alias expression
// (testdata/records/token-alias-v1.bin): flag 32, no bytes of its own.
func fixedAliasCard() *tokens.Record {
	r := fixedCard()
	r.AliasID = true
	return r
}

// fixedDecoyCard is fixedCard planted as a decoy that freezes its reader,
// with its decoy index entry (testdata/records/token-decoy-v1.bin).
func fixedDecoyCard() *tokens.Record {
	r := fixedCard()
	r.Decoy, r.DecoyFreeze = true, true
	r.Indexes = append(slices.Clone(r.Indexes), tokens.DecoyIndex(r.TenantID).Key(r.ID).String())
	slices.Sort(r.Indexes)
	return r
}

// fixedPlain is a plain value tokenized with every default, as
// POST /tokenize {"v": "..."} stores it (testdata/records/token-plain-v1.bin).
func fixedPlain() *tokens.Record {
	fp := "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
	return &tokens.Record{
		ID: fixToken, TenantID: fixTenant, Type: "token", Fingerprint: fp,
		FingerprintExpression: "{{ data | stringify }}", Containers: []string{"/general/high/"},
		CreatedBy: fixActor, CreatedAt: fixTime,
		Data:    json.RawMessage(`"value-12345"`),
		Indexes: []string{"tenant/" + fixTenant + "/idx/fp/" + fp + "/" + fixToken},
	}
}

func fixedLogLine() *auditlog.LineRecord {
	return &auditlog.LineRecord{Line: auditchain.Line{ActorID: fixActor, ActorType: "application", EntityType: "card", EntityID: fixToken,
		Operation: unit.OpCreate, Message: "Token created", CreatedAt: fixTime}}
}

// fixedAccessLine is the line of a masked read of a token by a list
// (testdata/records/log-access-v1.bin): flag 2, with transform and channel.
// fixedPurposeLine is an access line naming the call's purpose of access
// (testdata/records/log-purpose-v1.bin): flags 2 and 8.
func fixedPurposeLine() *auditlog.LineRecord {
	l := fixedAccessLine()
	l.Purpose = "fraud-review"
	return l
}

// fixedPurposeTenant is a tenant with purposes of access
// (testdata/records/tenant-purposes-v1.bin): flag 2, which tenant-v0.json
// cannot hold.
func fixedPurposeTenant() *tenants.Record {
	r := recordKindFixed("tenant").(*tenants.Record)
	r.Purposes = []tenants.Purpose{{Name: "fraud-review", Description: "Reviewing a flagged payment"},
		{Name: "support", Description: "Answering the card holder"}}
	return r
}

// fixedPurposeSession is a session whose grants' and ceiling's rules
// name purposes of access (testdata/records/session-purposes-v1.bin):
// flag 4.
func fixedPurposeSession() *sessions.Record {
	r := recordKindFixed("session").(*sessions.Record)
	r.Grants.Rules[0].Purposes = []string{"support"}
	r.Ceiling.Rules = []access.Rule{{Priority: 1, Container: "/pci/", Transform: access.TransformReveal,
		Permissions: []string{access.PermTokenRead}, Purposes: []string{"fraud-review", "support"}}}
	return r
}

// recordKindFixed is the fixed record of the record kind named name.
func recordKindFixed(name string) recordCodec {
	for _, k := range recordKinds {
		if k.name == name {
			return k.fixed()
		}
	}
	panic("no record kind " + name)
}

func fixedAccessLine() *auditlog.LineRecord {
	return &auditlog.LineRecord{Line: auditchain.Line{ActorID: fixActor, ActorType: "application", EntityType: "card", EntityID: fixToken,
		Operation: unit.OpRead, Message: "Token read (listed)", Transform: access.TransformMask, Channel: unit.ChannelList, CreatedAt: fixTime}}
}

// fixedChainedLine is a chained line (testdata/records/log-chained-v1.bin):
// flag 4, with its link.
func fixedChainedLine() *auditlog.LineRecord {
	l := fixedLogLine()
	l.Link = &auditlog.Link{Seq: 7}
	for i := range l.Link.Prev {
		l.Link.Prev[i], l.Link.Hash[i] = byte(i), byte(0xff-i)
	}
	return l
}

// fixedChainHead is a chain head signed up to seq 5
// (testdata/records/chain-head-v1.bin).
func fixedChainHead() *auditlog.Head {
	h := &auditlog.Head{Seq: 7, FirstSeq: 3, Since: fixTime, SignedSeq: 5, SignedAt: fixTime.Add(time.Minute), KeyID: "0123456789abcdef"}
	for i := range h.Hash {
		h.Hash[i] = byte(i)
	}
	return h
}

// fixedChainLink is the link record of line 7
// (testdata/records/chain-link-v1.bin).
func fixedChainLink() *auditlog.Link {
	l := &auditlog.Link{Seq: 7}
	for i := range l.Prev {
		l.Prev[i], l.Hash[i] = byte(i), byte(0xff-i)
	}
	return l
}

// fixedCheckpoint is a signed checkpoint of fixTenant's chain
// (testdata/records/checkpoint-v1.bin); the signature is a pattern, not a
// signature.
func fixedCheckpoint() *auditlog.CheckpointRecord {
	c := &auditlog.CheckpointRecord{TenantID: fixTenant, Seq: 7, CreatedAt: fixTime, KeyID: "0123456789abcdef", Final: true, Signature: make([]byte, 64)}
	for i := range c.Hash {
		c.Hash[i] = byte(i)
	}
	for i := range c.Signature {
		c.Signature[i] = byte(0xff - i)
	}
	return c
}

// fixedAuditKey is a retired signing key (testdata/records/audit-key-v1.bin):
// patterns for the public key and the wrapped seed.
func fixedAuditKey() *auditlog.KeyRecord {
	r := &auditlog.KeyRecord{ID: "0123456789abcdef", Public: make([]byte, 32), Wrapped: []byte{2, 5, 'l', 'o', 'c', 'a', 'l', 0, 0, 1, 2, 3},
		CreatedAt: fixTime, RetiredAt: fixTime.Add(time.Hour)}
	for i := range r.Public {
		r.Public[i] = byte(i)
	}
	return r
}

var (
	fixTokenKey = barrier.Tenant(fixTenant).Record(tokens.Kind, fixToken)
	fixLogKey   = barrier.Tenant(fixTenant).Logs().Key(barrier.TimeKey(fixTime) + "/" + fixLog)
)

var recordCmp = []cmp.Option{cmpopts.EquateEmpty()}

func TestRecordGolden(t *testing.T) {
	for _, tc := range []struct {
		file string
		key  barrier.Key
		rec  recordCodec
		zero func() recordCodec
	}{
		{"token-v1.bin", fixTokenKey, fixedCard(), func() recordCodec { return &tokens.Record{} }},
		{"token-plain-v1.bin", fixTokenKey, fixedPlain(), func() recordCodec { return &tokens.Record{} }},
		{"token-alias-v1.bin", fixTokenKey, fixedAliasCard(), func() recordCodec { return &tokens.Record{} }},
		{"token-decoy-v1.bin", fixTokenKey, fixedDecoyCard(), func() recordCodec { return &tokens.Record{} }},
		{"log-v1.bin", fixLogKey, fixedLogLine(), func() recordCodec { return &auditlog.LineRecord{} }},
		{"log-access-v1.bin", fixLogKey, fixedAccessLine(), func() recordCodec { return &auditlog.LineRecord{} }},
		{"log-purpose-v1.bin", fixLogKey, fixedPurposeLine(), func() recordCodec { return &auditlog.LineRecord{} }},
		{"tenant-purposes-v1.bin", barrier.Tenant(fixTenant).Record(unit.EntityTenant, fixTenant), fixedPurposeTenant(), func() recordCodec { return &tenants.Record{} }},
		{"session-purposes-v1.bin", barrier.Tenant(fixTenant).Record(unit.EntitySession, fixSession), fixedPurposeSession(), func() recordCodec { return &sessions.Record{} }},
		{"log-chained-v1.bin", fixLogKey, fixedChainedLine(), func() recordCodec { return &auditlog.LineRecord{} }},
		{"chain-head-v1.bin", barrier.Tenant(fixTenant).ChainHead(), fixedChainHead(), func() recordCodec { return &auditlog.Head{} }},
		{"chain-link-v1.bin", barrier.Tenant(fixTenant).ChainLink(barrier.TimeKey(fixTime) + "/" + fixLog), fixedChainLink(), func() recordCodec { return &auditlog.Link{} }},
		{"checkpoint-v1.bin", barrier.Tenant(fixTenant).Checkpoint(7), fixedCheckpoint(), func() recordCodec { return &auditlog.CheckpointRecord{} }},
		{"checkpoint-v1.bin", barrier.FinalCheckpoint(fixTenant), fixedCheckpoint(), func() recordCodec { return &auditlog.CheckpointRecord{} }},
		{"audit-key-v1.bin", barrier.AuditKey("0123456789abcdef"), fixedAuditKey(), func() recordCodec { return &auditlog.KeyRecord{} }},
		{"application-v1.bin", fixAppKey, fixedApplication(), func() recordCodec { return &access.ApplicationRecord{} }},
		{"application-public-v1.bin", fixAppKey, fixedPublicApplication(), func() recordCodec { return &access.ApplicationRecord{} }},
		{"application-purposes-v1.bin", fixAppKey, fixedPurposeApplication(), func() recordCodec { return &access.ApplicationRecord{} }},
		{"application-frozen-v1.bin", fixAppKey, fixedFrozenApplication(), func() recordCodec { return &access.ApplicationRecord{} }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(fixtureDir, tc.file)
			got, err := tc.rec.AppendRecord(nil, tc.key)
			if err != nil {
				t.Fatal(err)
			}
			if os.Getenv("TOKENVAULT_UPDATE_RECORDS") == "1" {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the stored record format changed: encoding the fixed record gives\n%x\nwant (%s)\n%x\n"+
					"Records on disk are in this format: a change needs a new format version (docs/internals.md, Stored records), "+
					"a new fixture, and a decoder that still reads this one.", got, path, want)
			}
			dec := tc.zero()
			if err := dec.DecodeRecord(tc.key, want); err != nil {
				t.Fatalf("decode %s: %v", path, err)
			}
			if diff := cmp.Diff(tc.rec, dec, recordCmp...); diff != "" {
				t.Errorf("decode %s: (-want +got)\n%s", path, diff)
			}
		})
	}
}

// TestRecordLegacy decodes the JSON records written before format version
// 1 (testdata/records/*-v0.json, written by that code).
func TestRecordLegacy(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(fixtureDir, "token-v0.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tok tokens.Record
	if err := tok.DecodeRecord(fixTokenKey, b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fixedCard(), &tok, recordCmp...); diff != "" {
		t.Errorf("token-v0.json: (-want +got)\n%s", diff)
	}
	b, err = os.ReadFile(filepath.Join(fixtureDir, "log-v0.json"))
	if err != nil {
		t.Fatal(err)
	}
	var l auditlog.LineRecord
	if err := l.DecodeRecord(fixLogKey, b); err != nil {
		t.Fatal(err)
	}
	want := fixedLogLine()
	if diff := cmp.Diff(want, &l, recordCmp...); diff != "" {
		t.Errorf("log-v0.json: (-want +got)\n%s", diff)
	}
	if got := auditlog.LogOf(fixLogKey, &l); got.ID != fixLog || got.TenantID != fixTenant {
		t.Errorf("log-v0.json: id %q tenant %q, want %q %q", got.ID, got.TenantID, fixLog, fixTenant)
	}
	b, err = os.ReadFile(filepath.Join(fixtureDir, "application-v0.json"))
	if err != nil {
		t.Fatal(err)
	}
	var app access.ApplicationRecord
	if err := app.DecodeRecord(fixAppKey, b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fixedApplication(), &app); diff != "" {
		t.Errorf("application-v0.json: (-want +got)\n%s", diff)
	}
}

// TestTokenRecordFields fails when a field is added to tokens.Record or to
// the API's Token, so that neither is silently left out: a field of the
// record must be added to the stored format (a new version,
// internal/tokens/record_token.go), to fixedCard and to this list; a field of Token must
// be filled by tokens.Record.api (from a record field of the same name, or
// say here why not) and added to this list.
func TestTokenRecordFields(t *testing.T) {
	names := func(rt reflect.Type) []string {
		var out []string
		for f := range rt.Fields() {
			if f.Anonymous {
				t.Errorf("%s embeds %s: records and API types are kept apart", rt.Name(), f.Name)
			}
			out = append(out, f.Name)
		}
		return out
	}
	wantRecord := []string{"ID", "TenantID", "Type", "Fingerprint", "FingerprintExpression", "Containers",
		"Metadata", "SearchIndexes", "DeduplicateToken", "ExpiresAt", "CreatedBy", "CreatedAt", "ModifiedBy",
		"ModifiedAt", "Data", "Mask", "MaskExpression", "CVCAt", "Indexes", "AliasID", "Decoy", "DecoyFreeze",
		"Subject", "SubjectKeyID", "Erased", "Sealing"}
	if diff := cmp.Diff(wantRecord, names(reflect.TypeFor[tokens.Record]())); diff != "" {
		t.Errorf("tokens.Record's fields changed; the stored format (internal/tokens/record_token.go) must follow (-want +got):\n%s", diff)
	}
	wantToken := []string{"ID", "TenantID", "Type", "Data", "Mask", "Fingerprint", "FingerprintExpression",
		"Containers", "Metadata", "SearchIndexes", "DeduplicateToken", "ExpiresAt", "CreatedBy", "CreatedAt",
		"ModifiedBy", "ModifiedAt", "Subject"}
	if diff := cmp.Diff(wantToken, names(reflect.TypeFor[tokens.Token]())); diff != "" {
		t.Errorf("Token's fields changed; tokens.Record.api (and the record, if it is stored) must follow (-want +got):\n%s", diff)
	}

	// fixedCard sets every field of the record, so that the golden,
	// round-trip and legacy tests, which compare it field by field, cover
	// each: a field the encoder or a decoder leaves out comes back empty.
	rec := fixedCard()
	rv := reflect.ValueOf(rec).Elem()
	for f := range reflect.TypeFor[tokens.Record]().Fields() {
		// AliasID came after fixedCard's fixtures (token-v1.bin,
		// token-v0.json, which cannot hold it): fixedAliasCard and
		// token-alias-v1.bin cover it; so came Decoy and DecoyFreeze,
		// which fixedDecoyCard and token-decoy-v1.bin cover; so came
		// Subject and SubjectKeyID (Erased and Sealing are never stored
		// as such), which fixedSubjectCard and token-subject-v1.bin cover.
		if rv.FieldByIndex(f.Index).IsZero() && !slices.Contains([]string{"AliasID", "Decoy", "DecoyFreeze", "Subject", "SubjectKeyID", "Erased", "Sealing"}, f.Name) {
			t.Errorf("fixedCard leaves tokens.Record.%s unset: the format tests would not see it", f.Name)
		}
	}

	// api fills every field of Token: from the record's field of the same
	// name, Data and Mask decoded from their JSON text.
	rec.Subject = fixSubject
	for _, transform := range []string{access.TransformReveal, access.TransformMask, access.TransformRedact} {
		tok := tokens.TokenOf(rec, transform)
		tv := reflect.ValueOf(tok).Elem()
		for f := range reflect.TypeFor[tokens.Token]().Fields() {
			got := tv.FieldByIndex(f.Index).Interface()
			var want any
			switch f.Name {
			case "Data":
				switch transform {
				case access.TransformReveal:
					want, _ = jsontext.Decode(rec.Data)
				case access.TransformMask:
					want, _ = jsontext.Decode(rec.Mask)
				}
			case "Mask":
				want, _ = jsontext.Decode(rec.Mask)
			default:
				rf := rv.FieldByName(f.Name)
				if !rf.IsValid() {
					t.Errorf("Token.%s has no field of the same name in tokens.Record: say in tokens.Record.api and here where it comes from", f.Name)
					continue
				}
				want = rf.Interface()
			}
			if want != nil && tv.FieldByIndex(f.Index).IsZero() {
				t.Errorf("api(%q) leaves Token.%s unset", transform, f.Name)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("api(%q): Token.%s (-want +got):\n%s", transform, f.Name, diff)
			}
		}
		// The token's containers are its own: an answer changed by its
		// receiver does not change the record.
		tok.Containers[0] = "/changed/"
		if rec.Containers[0] != "/pci/" {
			t.Errorf("api(%q) shares the record's containers", transform)
		}
	}
	// value is api's Data, without the rest of the token.
	for _, transform := range []string{access.TransformReveal, access.TransformMask, access.TransformRedact, "unknown"} {
		for _, r := range []*tokens.Record{fixedCard(), fixedPlain()} {
			if diff := cmp.Diff(tokens.TokenOf(r, transform).Data, tokens.Value(r, transform)); diff != "" {
				t.Errorf("value(%q) of a %s differs from api's Data (-api +value):\n%s", transform, r.Type, diff)
			}
		}
	}
}

// TestTokenRecordV0IsTodaysJSON: the version 0 fixture is what the Vault
// wrote before format version 1 (json.Marshal of the record that embedded
// Token, the tags as they were); tokens.RecordV0 writes it byte for byte,
// so the legacy store the tests build is that code's.
func TestTokenRecordV0IsTodaysJSON(t *testing.T) {
	b, err := json.Marshal(fixedCard().V0())
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(fixtureDir, "token-v0.json"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(want) {
		t.Errorf("tokens.RecordV0 writes\n%s\nwant\n%s", b, want)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	cases := []*tokens.Record{fixedCard(), fixedPlain(), fixedAliasCard()}
	// Odd values: a fingerprint that is not hex, an index key of another
	// shape, a time zone, a custom id, empty data.
	odd := fixedCard()
	odd.ID = "custom-id:42"
	odd.Fingerprint = "NOT-HEX"
	odd.Indexes = []string{"tenant/" + fixTenant + "/idx/search/zz/custom-id:42", "tenant/other/idx/fp/00/x", ""}
	odd.CreatedAt = time.Date(1960, 5, 6, 7, 8, 9, 1, time.FixedZone("", 5*3600+1800))
	odd.Metadata = map[string]string{"": ""}
	cases = append(cases, odd)
	for _, rec := range cases {
		key := barrier.Tenant(rec.TenantID).Record(tokens.Kind, rec.ID)
		b, err := rec.AppendRecord(nil, key)
		if err != nil {
			t.Fatal(err)
		}
		var got tokens.Record
		if err := got.DecodeRecord(key, b); err != nil {
			t.Fatalf("decode %x: %v", b, err)
		}
		if diff := cmp.Diff(rec, &got, recordCmp...); diff != "" {
			t.Errorf("round trip of %s: (-want +got)\n%s", rec.ID, diff)
		}
		if !got.CreatedAt.Equal(rec.CreatedAt) || got.CreatedAt.Format(time.RFC3339Nano) != rec.CreatedAt.Format(time.RFC3339Nano) {
			t.Errorf("created_at %v, want %v", got.CreatedAt, rec.CreatedAt)
		}
	}
	// Log lines: created_at is the key's time (not stored), or another.
	for _, at := range []time.Time{fixTime, fixTime.Add(1), fixTime.In(time.FixedZone("", 3600)), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)} {
		l := fixedLogLine()
		l.CreatedAt = at
		b, err := l.AppendRecord(nil, fixLogKey)
		if err != nil {
			t.Fatal(err)
		}
		var got auditlog.LineRecord
		if err := got.DecodeRecord(fixLogKey, b); err != nil {
			t.Fatalf("decode %x: %v", b, err)
		}
		if !got.CreatedAt.Equal(at) || got.CreatedAt.Format(time.RFC3339Nano) != at.Format(time.RFC3339Nano) {
			t.Errorf("log line created_at %v, want %v", got.CreatedAt, at)
		}
	}
	if _, err := fixedCard().AppendRecord(nil, barrier.Tenant(fixTenant).Record(tokens.Kind, "another")); err == nil {
		t.Error("a token encoded for another token's key: no error")
	}
}

// TestRecordCorrupt checks that every truncation and every single-byte
// change of a record either decodes or fails with unit.ErrRecord: never a panic.
func TestRecordCorrupt(t *testing.T) {
	for _, rec := range []recordCodec{fixedCard(), fixedLogLine(), fixedApplication(), fixedPublicApplication(), fixedFrozenApplication(), fixedCheckpoint(), fixedAuditKey()} {
		key := fixTokenKey
		switch rec.(type) {
		case *auditlog.LineRecord:
			key = fixLogKey
		case *access.ApplicationRecord:
			key = fixAppKey
		case *auditlog.CheckpointRecord:
			key = barrier.Tenant(fixTenant).Checkpoint(7)
		case *auditlog.KeyRecord:
			key = barrier.AuditKey("0123456789abcdef")
		}
		b, _ := rec.AppendRecord(nil, key)
		for n := range len(b) {
			if err := reflect.New(reflect.TypeOf(rec).Elem()).Interface().(recordCodec).DecodeRecord(key, b[:n]); !errors.Is(err, unit.ErrRecord) {
				t.Errorf("decode of %d of %d bytes: %v, want unit.ErrRecord", n, len(b), err)
			}
		}
		for i := range b {
			for _, x := range []byte{0x01, 0x80, 0xff} {
				c := slices.Clone(b)
				c[i] ^= x
				err := reflect.New(reflect.TypeOf(rec).Elem()).Interface().(recordCodec).DecodeRecord(key, c)
				if err != nil && !errors.Is(err, unit.ErrRecord) {
					t.Errorf("decode with byte %d ^ %#x: %v, want nil or unit.ErrRecord", i, x, err)
				}
			}
		}
	}
}

func FuzzRecords(f *testing.F) {
	for _, name := range []string{"token-v1.bin", "token-plain-v1.bin", "token-decoy-v1.bin", "log-v1.bin", "log-access-v1.bin", "log-chained-v1.bin", "chain-head-v1.bin", "chain-link-v1.bin", "checkpoint-v1.bin", "audit-key-v1.bin", "token-v0.json", "log-v0.json",
		"application-v1.bin", "application-public-v1.bin", "application-frozen-v1.bin", "application-v0.json"} {
		b, err := os.ReadFile(filepath.Join(fixtureDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var tok tokens.Record
		if err := tok.DecodeRecord(fixTokenKey, b); err == nil {
			again, err := tok.AppendRecord(nil, fixTokenKey)
			if err != nil {
				t.Fatalf("a decoded token does not encode: %v", err)
			}
			var tok2 tokens.Record
			if err := tok2.DecodeRecord(fixTokenKey, again); err != nil {
				t.Fatalf("a re-encoded token does not decode: %v", err)
			}
			if diff := cmp.Diff(&tok, &tok2, recordCmp...); diff != "" {
				t.Fatalf("token round trip: (-first +second)\n%s", diff)
			}
		} else if !errors.Is(err, unit.ErrRecord) {
			t.Fatalf("token decode error %v is not unit.ErrRecord", err)
		}
		var l auditlog.LineRecord
		if err := l.DecodeRecord(fixLogKey, b); err == nil {
			again, _ := l.AppendRecord(nil, fixLogKey)
			var l2 auditlog.LineRecord
			if err := l2.DecodeRecord(fixLogKey, again); err != nil {
				t.Fatalf("a re-encoded log line does not decode: %v", err)
			}
		} else if !errors.Is(err, unit.ErrRecord) {
			t.Fatalf("log decode error %v is not unit.ErrRecord", err)
		}
		fixCheckpointKey := barrier.Tenant(fixTenant).Checkpoint(7)
		var cp auditlog.CheckpointRecord
		if err := cp.DecodeRecord(fixCheckpointKey, b); err == nil {
			if cp.Seq == 7 { // stored at its seq's key: it encodes again
				again, err := cp.AppendRecord(nil, fixCheckpointKey)
				if err != nil {
					t.Fatalf("a decoded checkpoint does not encode: %v", err)
				}
				var cp2 auditlog.CheckpointRecord
				if err := cp2.DecodeRecord(fixCheckpointKey, again); err != nil {
					t.Fatalf("a re-encoded checkpoint does not decode: %v", err)
				}
				if diff := cmp.Diff(&cp, &cp2, recordCmp...); diff != "" {
					t.Fatalf("checkpoint round trip: (-first +second)\n%s", diff)
				}
			}
		} else if !errors.Is(err, unit.ErrRecord) {
			t.Fatalf("checkpoint decode error %v is not unit.ErrRecord", err)
		}
		fixAuditKeyKey := barrier.AuditKey("0123456789abcdef")
		var ak auditlog.KeyRecord
		if err := ak.DecodeRecord(fixAuditKeyKey, b); err == nil {
			again, err := ak.AppendRecord(nil, fixAuditKeyKey)
			if err != nil {
				t.Fatalf("a decoded audit key does not encode: %v", err)
			}
			var ak2 auditlog.KeyRecord
			if err := ak2.DecodeRecord(fixAuditKeyKey, again); err != nil {
				t.Fatalf("a re-encoded audit key does not decode: %v", err)
			}
			if diff := cmp.Diff(&ak, &ak2, recordCmp...); diff != "" {
				t.Fatalf("audit key round trip: (-first +second)\n%s", diff)
			}
		} else if !errors.Is(err, unit.ErrRecord) {
			t.Fatalf("audit key decode error %v is not unit.ErrRecord", err)
		}
		var app access.ApplicationRecord
		if err := app.DecodeRecord(fixAppKey, b); err == nil {
			again, err := app.AppendRecord(nil, fixAppKey)
			if errors.Is(err, unit.ErrRecord) {
				return // a version 0 time version 1 cannot hold
			} else if err != nil {
				t.Fatalf("a decoded application does not encode: %v", err)
			}
			var app2 access.ApplicationRecord
			if err := app2.DecodeRecord(fixAppKey, again); err != nil {
				t.Fatalf("a re-encoded application does not decode: %v", err)
			}
			if diff := cmp.Diff(&app, &app2); diff != "" {
				t.Fatalf("application round trip: (-first +second)\n%s", diff)
			}
		} else if !errors.Is(err, unit.ErrRecord) {
			t.Fatalf("application decode error %v is not unit.ErrRecord", err)
		}
	})
}

// TestStoredJSONWithDuplicateKeysReads: a record's data or mask is read
// keeping the last of a key given twice, never as nothing: the refusal
// of duplicate keys is for what callers send, not for what is kept.
func TestStoredJSONWithDuplicateKeysReads(t *testing.T) {
	rec := &tokens.Record{ID: "t", Type: unit.TypeToken, Data: json.RawMessage(`{"a": 1, "a": 2}`), Mask: json.RawMessage(`{"m": "x", "m": "y"}`)}
	tok := tokens.TokenOf(rec, access.TransformReveal)
	data, _ := tok.Data.(map[string]any)
	mask, _ := tok.Mask.(map[string]any)
	if fmt.Sprint(data["a"]) != "2" || mask["m"] != "y" {
		t.Errorf("data %v, mask %v; want a 2 and m y", tok.Data, tok.Mask)
	}
}
