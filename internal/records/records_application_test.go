package records

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/records/recordfix"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestApplicationRecordFields fails when a field is added to
// access.ApplicationRecord, or to the AccessRule and Condition a record
// holds, so that none is silently left out: a field of the record (or of
// its rules) must be added to the stored format (a new version,
// internal/access/record_application.go), to fixedApplication
// (internal/records/recordfix) and to this list. The API's Application,
// a root type, is held to the record by TestApplicationAPIFields
// (internal/records/behaviour).
func TestApplicationRecordFields(t *testing.T) {
	walk := func(rt reflect.Type) []string {
		paths, embedded := recordfix.FieldPaths(rt)
		for _, e := range embedded {
			t.Errorf("%s is embedded: records and API types are kept apart", e)
		}
		return paths
	}
	rules := recordfix.RuleFieldPaths
	wantRecord := slices.Concat([]string{"ID", "TenantID", "Name", "Type", "Permissions", "Rules"}, rules,
		[]string{"ExpiresAt", "CreatedBy", "CreatedAt", "ModifiedBy", "ModifiedAt", "KeyHash", "AllowedOrigins", "RevealBudget", "Frozen"})
	if diff := cmp.Diff(wantRecord, walk(reflect.TypeFor[access.ApplicationRecord]())); diff != "" {
		t.Errorf("access.ApplicationRecord's fields changed; the stored format (internal/access/record_application.go) must follow (-want +got):\n%s", diff)
	}
	// The record cannot hold the key: only its hash is stored.
	if _, ok := reflect.TypeFor[access.ApplicationRecord]().FieldByName("Key"); ok {
		t.Error("access.ApplicationRecord has a Key field: a record holds only the key's hash")
	}

	// fixedApplication sets every field of the record and of its rules,
	// so that the golden, round-trip and legacy tests, which compare it
	// field by field, cover each: a field the encoder or a decoder leaves
	// out comes back empty. AllowedOrigins is the exception: only a
	// public application holds them, and version 0 (whose fixture is
	// fixedApplication too) cannot; fixedPublicApplication sets them.
	// RevealBudget and Frozen are the others: version 0 cannot hold them
	// either, and fixedFrozenApplication sets them.
	rec := fixedApplication()
	rv := reflect.ValueOf(rec).Elem()
	for f := range reflect.TypeFor[access.ApplicationRecord]().Fields() {
		if f.Name == "Rules" {
			// Rule.Purposes: only fixedPurposeApplication sets them
			// (below), since application-v0.json cannot hold them.
			if rv.FieldByIndex(f.Index).IsZero() {
				t.Error("fixedApplication leaves access.ApplicationRecord.Rules unset")
			}
			continue
		}
		if f.Name == "AllowedOrigins" {
			if !rv.FieldByIndex(f.Index).IsZero() || reflect.ValueOf(fixedPublicApplication()).Elem().FieldByIndex(f.Index).IsZero() {
				t.Error("AllowedOrigins: set in fixedApplication, or unset in fixedPublicApplication")
			}
			continue
		}
		if f.Name == "RevealBudget" || f.Name == "Frozen" {
			if !rv.FieldByIndex(f.Index).IsZero() || reflect.ValueOf(fixedFrozenApplication()).Elem().FieldByIndex(f.Index).IsZero() {
				t.Errorf("%s: set in fixedApplication, or unset in fixedFrozenApplication", f.Name)
			}
			continue
		}
		if rv.FieldByIndex(f.Index).IsZero() {
			t.Errorf("fixedApplication leaves access.ApplicationRecord.%s unset: the format tests would not see it", f.Name)
		}
	}
	for _, rt := range []reflect.Type{reflect.TypeFor[access.Rule](), reflect.TypeFor[access.Condition]()} {
		for f := range rt.Fields() {
			set := false
			for _, rule := range rec.Rules {
				if rt == reflect.TypeFor[access.Rule]() {
					set = set || !reflect.ValueOf(rule).FieldByIndex(f.Index).IsZero()
					continue
				}
				for _, c := range rule.Conditions {
					set = set || !reflect.ValueOf(c).FieldByIndex(f.Index).IsZero()
				}
			}
			if rt == reflect.TypeFor[access.Rule]() && f.Name == "Purposes" {
				if set || !slices.ContainsFunc(fixedPurposeApplication().Rules, func(r access.Rule) bool { return len(r.Purposes) > 0 }) {
					t.Error("Rule.Purposes: set in fixedApplication, or unset in fixedPurposeApplication")
				}
				continue
			}
			if !set {
				t.Errorf("fixedApplication leaves %s.%s unset in every rule: the format tests would not see it", rt.Name(), f.Name)
			}
		}
	}
}

// TestApplicationRecordRoundTrip: every field survives an encoding and a
// decoding, exactly (no EquateEmpty: the empty lists the API shows as []
// come back as empty lists); TestApplicationAPIRoundTrip
// (internal/records/behaviour) holds the API's JSON of the same cases.
func TestApplicationRecordRoundTrip(t *testing.T) {
	cases := []*access.ApplicationRecord{fixedApplication(), fixedPublicApplication(), fixedPurposeApplication(), fixedFrozenApplication()}
	// The bootstrap management application: no rules, no expiry, never
	// modified.
	mgmt := &access.ApplicationRecord{ID: fixApp, TenantID: fixTenant, Name: "Owner",
		Type: access.Management, Permissions: access.PermissionsFor(access.Management), Rules: []access.Rule{},
		CreatedBy: fixActor, CreatedAt: fixTime, KeyHash: fixedApplication().KeyHash}
	cases = append(cases, mgmt)
	// Odd values: a custom id, words and UUIDs as names, extreme
	// priorities, empty strings, no key hash, another time zone, times at
	// the ends of the range.
	odd := fixedApplication()
	odd.ID = "custom-id:42"
	odd.Name = "token"
	odd.Type = "something-else"
	odd.Permissions = []string{}
	odd.Rules[0].Priority = math.MinInt64
	odd.Rules[1].Priority = math.MaxInt64
	odd.Rules[1].Description = fixToken
	odd.Rules = append(odd.Rules, access.Rule{Permissions: []string{}, Conditions: []access.Condition{{}}})
	odd.KeyHash = nil
	odd.CreatedAt = time.Date(1960, 5, 6, 7, 8, 9, 1, time.FixedZone("", 5*3600+1800))
	odd.ExpiresAt = ptr(time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC))
	odd.ModifiedAt = ptr(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC))
	odd.CreatedBy, odd.ModifiedBy = "", "system"
	cases = append(cases, odd)
	for _, rec := range cases {
		key := barrier.Tenant(rec.TenantID).Record(unit.EntityApplication, rec.ID)
		b, err := rec.AppendRecord(nil, key)
		if err != nil {
			t.Fatal(err)
		}
		if b[0] != access.ApplicationFormat {
			t.Fatalf("encoding starts with %#x", b[0])
		}
		var got access.ApplicationRecord
		if err := got.DecodeRecord(key, b); err != nil {
			t.Fatalf("decode %x: %v", b, err)
		}
		if diff := cmp.Diff(rec, &got); diff != "" {
			t.Errorf("round trip of %s: (-want +got)\n%s", rec.ID, diff)
		}
		for _, at := range [][2]*time.Time{{&rec.CreatedAt, &got.CreatedAt}, {rec.ExpiresAt, got.ExpiresAt}, {rec.ModifiedAt, got.ModifiedAt}} {
			if at[0] != nil && at[0].Format(time.RFC3339Nano) != at[1].Format(time.RFC3339Nano) {
				t.Errorf("time %v comes back as %v", at[0], at[1])
			}
		}
	}
	// Nil lists, which the Vault never stores, come back empty.
	nils := fixedApplication()
	nils.Permissions, nils.Rules = nil, nil
	b, err := nils.AppendRecord(nil, fixAppKey)
	if err != nil {
		t.Fatal(err)
	}
	var got access.ApplicationRecord
	if err := got.DecodeRecord(fixAppKey, b); err != nil || got.Permissions == nil || got.Rules == nil {
		t.Errorf("nil lists decode as %#v, %#v, %v; want empty lists", got.Permissions, got.Rules, err)
	}

	if _, err := fixedApplication().AppendRecord(nil, barrier.Tenant(fixTenant).Record(unit.EntityApplication, "another")); err == nil {
		t.Error("an application encoded for another application's key: no error")
	}
	if _, err := fixedApplication().AppendRecord(nil, barrier.Tenant(fixTenant).Record(tokens.Kind, fixApp)); err == nil {
		t.Error("an application encoded for a token's key: no error")
	}
	// Version 0 may not name another application: the key does.
	var v0 access.ApplicationRecord
	if err := v0.DecodeRecord(fixAppKey, []byte(`{"id":"other","tenant_id":"other","name":"x"}`)); err != nil ||
		v0.ID != fixApp || v0.TenantID != fixTenant {
		t.Errorf("version 0 naming another application: %s/%s, %v", v0.TenantID, v0.ID, err)
	}
	// A version 0 time before year 0 in UTC is refused, not written in a
	// record that would not decode.
	var early access.ApplicationRecord
	if err := early.DecodeRecord(fixAppKey, []byte(`{"created_at":"0000-01-01T00:00:00+01:00"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := early.AppendRecord(nil, fixAppKey); !errors.Is(err, unit.ErrRecord) {
		t.Errorf("a time before year 0 encodes: %v", err)
	}
	var bad access.ApplicationRecord
	for _, b := range [][]byte{nil, {0}, {2}, {'{'}, {1, 4}} {
		if err := bad.DecodeRecord(fixAppKey, b); !errors.Is(err, unit.ErrRecord) {
			t.Errorf("decode %x: %v, want unit.ErrRecord", b, err)
		}
	}
}

// TestApplicationRecordV0IsTodaysJSON: the version 0 fixture is what the
// Vault wrote before format version 1, json.Marshal of the record with
// the API's tags; access.ApplicationRecordV0 writes it byte for byte.
func TestApplicationRecordV0IsTodaysJSON(t *testing.T) {
	b, err := json.Marshal(recordfix.ApplicationV0(fixedApplication()))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(fixtureDir, "application-v0.json"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(want) {
		t.Errorf("access.ApplicationRecordV0 writes\n%s\nwant\n%s", b, want)
	}
}
