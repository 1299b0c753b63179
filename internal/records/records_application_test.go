package tokenvault

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

const fixApp = "0190f5a2-9000-7000-8000-000000000005"

var fixAppKey = barrier.Tenant(fixTenant).Record(EntityApplication, fixApp)

// fixedApplication is the record of testdata/records/application-v0.json
// and application-v1.bin: an application with every stored field set (its
// record has no field for the key: only the key's hash is stored). Applications' rules name a
// container and sessions' carry conditions; the record holds both.
func fixedApplication() *access.ApplicationRecord {
	exp := fixTime.Add(30 * 24 * time.Hour)
	mod := fixTime.Add(time.Hour)
	return &access.ApplicationRecord{
		ID: fixApp, TenantID: fixTenant, Name: "Checkout backend", Type: Private,
		Permissions: []string{PermTokenCreate, PermTokenRead},
		Rules: []AccessRule{
			{Description: "cards, masked", Priority: 1, Container: "/pci/",
				Transform: TransformMask, Permissions: []string{PermTokenRead, PermTokenUse}},
			{Priority: 2, Container: "/general/high/", Transform: TransformReveal,
				Conditions: []Condition{
					{Attribute: "id", Operator: OperatorEquals, Value: fixToken},
					{Attribute: "container", Operator: OperatorStartsWith, Value: "/general/"},
				},
				Permissions: []string{PermTokenRead}},
		},
		ExpiresAt: &exp,
		CreatedBy: fixActor, CreatedAt: fixTime,
		ModifiedBy: "0190f5a2-8c1e-7b3a-9d4e-000000000003", ModifiedAt: &mod,
		KeyHash: []byte{0x5e, 0x88, 0x48, 0x98, 0xda, 0x28, 0x04, 0x71, 0x51, 0xd0, 0xe5, 0x6f, 0x8d, 0xc6, 0x29, 0x27,
			0x73, 0x60, 0x3d, 0x0d, 0x6a, 0xab, 0xbd, 0xd6, 0x2a, 0x11, 0xef, 0x72, 0x1d, 0x15, 0x42, 0xd8},
	}
}

// TestApplicationRecordFields fails when a field is added to
// access.ApplicationRecord, to the API's Application, or to the AccessRule and
// Condition a record holds, so that none is silently left out: a field of
// the record (or of its rules) must be added to the stored format (a new
// version, internal/access/record_application.go), to fixedApplication and to this list;
// a field of Application must be filled by access.ApplicationRecord.api (from a
// record field of the same name, or say here why not) and added to this
// list.
func TestApplicationRecordFields(t *testing.T) {
	var walk func(reflect.Type, string) []string
	walk = func(rt reflect.Type, prefix string) []string {
		var out []string
		for f := range rt.Fields() {
			if f.Anonymous {
				t.Errorf("%s embeds %s: records and API types are kept apart", rt.Name(), f.Name)
			}
			out = append(out, prefix+f.Name)
			if f.Type == reflect.TypeFor[[]AccessRule]() || f.Type == reflect.TypeFor[[]Condition]() {
				out = append(out, walk(f.Type.Elem(), prefix+f.Name+"[].")...)
			}
		}
		return out
	}
	rules := []string{"Rules[].Description", "Rules[].Priority", "Rules[].Container", "Rules[].Conditions",
		"Rules[].Conditions[].Attribute", "Rules[].Conditions[].Operator", "Rules[].Conditions[].Value",
		"Rules[].Transform", "Rules[].Permissions"}
	wantRecord := slices.Concat([]string{"ID", "TenantID", "Name", "Type", "Permissions", "Rules"}, rules,
		[]string{"ExpiresAt", "CreatedBy", "CreatedAt", "ModifiedBy", "ModifiedAt", "KeyHash"})
	if diff := cmp.Diff(wantRecord, walk(reflect.TypeFor[access.ApplicationRecord](), "")); diff != "" {
		t.Errorf("access.ApplicationRecord's fields changed; the stored format (internal/access/record_application.go) must follow (-want +got):\n%s", diff)
	}
	wantApp := slices.Concat([]string{"ID", "TenantID", "Name",
		"Key", // never in a record: set by the answers of create and regenerate only
		"Type", "Permissions", "Rules"}, rules,
		[]string{"ExpiresAt", "CreatedBy", "CreatedAt", "ModifiedBy", "ModifiedAt"})
	if diff := cmp.Diff(wantApp, walk(reflect.TypeFor[Application](), "")); diff != "" {
		t.Errorf("Application's fields changed; access.ApplicationRecord.api (and the record, if it is stored) must follow (-want +got):\n%s", diff)
	}
	// The record cannot hold the key: only its hash is stored.
	if _, ok := reflect.TypeFor[access.ApplicationRecord]().FieldByName("Key"); ok {
		t.Error("access.ApplicationRecord has a Key field: a record holds only the key's hash")
	}

	// fixedApplication sets every field of the record and of its rules,
	// so that the golden, round-trip and legacy tests, which compare it
	// field by field, cover each: a field the encoder or a decoder leaves
	// out comes back empty.
	rec := fixedApplication()
	rv := reflect.ValueOf(rec).Elem()
	for f := range reflect.TypeFor[access.ApplicationRecord]().Fields() {
		if rv.FieldByIndex(f.Index).IsZero() {
			t.Errorf("fixedApplication leaves access.ApplicationRecord.%s unset: the format tests would not see it", f.Name)
		}
	}
	for _, rt := range []reflect.Type{reflect.TypeFor[AccessRule](), reflect.TypeFor[Condition]()} {
		for f := range rt.Fields() {
			set := false
			for _, rule := range rec.Rules {
				if rt == reflect.TypeFor[AccessRule]() {
					set = set || !reflect.ValueOf(rule).FieldByIndex(f.Index).IsZero()
					continue
				}
				for _, c := range rule.Conditions {
					set = set || !reflect.ValueOf(c).FieldByIndex(f.Index).IsZero()
				}
			}
			if !set {
				t.Errorf("fixedApplication leaves %s.%s unset in every rule: the format tests would not see it", rt.Name(), f.Name)
			}
		}
	}

	// api fills every field of Application but Key from the record's
	// field of the same name, and leaves Key empty.
	app := applicationOf(rec)
	av := reflect.ValueOf(app).Elem()
	for f := range reflect.TypeFor[Application]().Fields() {
		got := av.FieldByIndex(f.Index)
		if f.Name == "Key" {
			if !got.IsZero() {
				t.Errorf("api sets Key %q: a record has no key", app.Key)
			}
			continue
		}
		rf := rv.FieldByName(f.Name)
		if !rf.IsValid() {
			t.Errorf("Application.%s has no field of the same name in access.ApplicationRecord: say in access.ApplicationRecord.api and here where it comes from", f.Name)
			continue
		}
		if got.IsZero() {
			t.Errorf("api leaves Application.%s unset", f.Name)
		}
		if diff := cmp.Diff(rf.Interface(), got.Interface()); diff != "" {
			t.Errorf("api: Application.%s (-record +api):\n%s", f.Name, diff)
		}
	}
}

// TestApplicationRecordRoundTrip: every field survives an encoding and a
// decoding, exactly (no EquateEmpty: the empty lists the API shows as []
// come back as empty lists), and the API's JSON of the application is the
// same.
func TestApplicationRecordRoundTrip(t *testing.T) {
	cases := []*access.ApplicationRecord{fixedApplication()}
	// The bootstrap management application: no rules, no expiry, never
	// modified.
	mgmt := &access.ApplicationRecord{ID: fixApp, TenantID: fixTenant, Name: "Owner",
		Type: Management, Permissions: PermissionsFor(Management), Rules: []AccessRule{},
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
	odd.Rules = append(odd.Rules, AccessRule{Permissions: []string{}, Conditions: []Condition{{}}})
	odd.KeyHash = nil
	odd.CreatedAt = time.Date(1960, 5, 6, 7, 8, 9, 1, time.FixedZone("", 5*3600+1800))
	odd.ExpiresAt = ptr(time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC))
	odd.ModifiedAt = ptr(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC))
	odd.CreatedBy, odd.ModifiedBy = "", "system"
	cases = append(cases, odd)
	for _, rec := range cases {
		key := barrier.Tenant(rec.TenantID).Record(EntityApplication, rec.ID)
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
		want, _ := json.Marshal(applicationOf(rec))
		api, _ := json.Marshal(applicationOf(&got))
		if string(api) != string(want) {
			t.Errorf("the API's JSON of %s changed:\n%s\nwant\n%s", rec.ID, api, want)
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

	if _, err := fixedApplication().AppendRecord(nil, barrier.Tenant(fixTenant).Record(EntityApplication, "another")); err == nil {
		t.Error("an application encoded for another application's key: no error")
	}
	if _, err := fixedApplication().AppendRecord(nil, barrier.Tenant(fixTenant).Record(kindToken, fixApp)); err == nil {
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

// TestLegacyApplicationRecords: applications stored in the JSON of format
// version 0 authenticate and answer as they did; a write rewrites the one
// it touches in format version 1, and the re-seal pass the rest, after
// which every key still works.
func TestLegacyApplicationRecords(t *testing.T) {
	ctx := context.Background()
	lv := newLegacyVault(t)
	apps := barrier.Tenant(lv.tid).Records(EntityApplication)
	list := func() *Page[Application] {
		t.Helper()
		p, err := lv.v.ListApplications(ctx, lv.mgmt, ListApplicationsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := list()
	if j, v1 := lv.format(t, apps); j != 0 || v1 != 2 {
		t.Fatalf("new applications: %d JSON, %d in format 1", j, v1)
	}

	// Write both as the code before format version 1 did, and void the
	// auth cache, so the keys are read from these records.
	err := lv.v.update(ctx, func(tx *txn) error {
		_, err := tx.TenantKeys(lv.tid, false)
		if err != nil {
			return err
		}
		kvs, err := tx.ScanValues(apps)
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			var r access.ApplicationRecord
			if err := tx.OpenRecord(kv.Key, kv.Raw, &r); err != nil {
				return err
			}
			b, _ := json.Marshal(applicationRecordV0FromRecord(&r))
			if err := tx.Reseal(kv.Key, b); err != nil {
				return err
			}
		}
		tx.MarkAuthChanged()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if j, _ := lv.format(t, apps); j != 2 {
		t.Fatalf("downgraded: %d applications in JSON, want 2", j)
	}
	if diff := cmp.Diff(want, list()); diff != "" {
		t.Fatalf("version 0 answers differently (-new +old):\n%s", diff)
	}
	app, err := lv.v.GetApplicationByKey(ctx, lv.mgmt)
	if err != nil || app.Type != Management {
		t.Fatalf("the management key on a version 0 record: %+v, %v", app, err)
	}
	if _, err := lv.v.CreateToken(ctx, lv.key, TokenRequest{Type: TypeToken, Data: "x"}); err != nil {
		t.Fatalf("the private key on a version 0 record: %v", err)
	}

	// A write rewrites the application it touches.
	lv.advance(time.Second)
	mine := want.Data[1]
	if mine.Name != "old" {
		t.Fatalf("second application is %q", mine.Name)
	}
	if _, err := lv.v.UpdateApplication(ctx, lv.mgmt, mine.ID, UpdateApplicationRequest{
		Name: "renamed", Permissions: mine.Permissions, Rules: mine.Rules}); err != nil {
		t.Fatal(err)
	}
	if j, v1 := lv.format(t, apps); j != 1 || v1 != 1 {
		t.Fatalf("after one update: %d JSON, %d in format 1; want 1 and 1", j, v1)
	}

	// The re-seal pass rewrites the other.
	if err := lv.v.RotateDataKey(ctx, lv.mgmt); err != nil {
		t.Fatal(err)
	}
	lv.advance(time.Minute)
	if _, err := lv.v.Reseal(ctx); err != nil {
		t.Fatal(err)
	}
	if j, v1 := lv.format(t, apps); j != 0 || v1 != 2 {
		t.Errorf("after the re-seal pass: %d JSON, %d in format 1; want 0 and 2", j, v1)
	}
	for k, pt := range lv.plaintexts(t, apps) {
		if pt[0] != access.ApplicationFormat {
			t.Errorf("%s starts with %#x, want the format version", k, pt[0])
		}
	}
	// Read from the store, not the cache: the re-sealed records
	// authenticate.
	if err := lv.v.update(ctx, func(tx *txn) error { tx.MarkAuthChanged(); return nil }); err != nil {
		t.Fatal(err)
	}
	if app, err := lv.v.GetApplicationByKey(ctx, lv.mgmt); err != nil || app.Type != Management {
		t.Errorf("the management key after the re-seal pass: %+v, %v", app, err)
	}
	if _, err := lv.v.CreateToken(ctx, lv.key, TokenRequest{Type: TypeToken, Data: "y"}); err != nil {
		t.Errorf("the private key after the re-seal pass: %v", err)
	}
	got := list()
	want.Data[1].Name, want.Data[1].ModifiedBy, want.Data[1].ModifiedAt = "renamed", got.Data[1].ModifiedBy, got.Data[1].ModifiedAt
	if diff := cmp.Diff(want, got); diff != "" || got.Data[1].ModifiedAt == nil {
		t.Errorf("after the migration (-before +after):\n%s", diff)
	}
}

// applicationRecordV0FromRecord is r as the code before format version 1
// stored it.
func applicationRecordV0FromRecord(r *access.ApplicationRecord) access.ApplicationRecordV0 {
	v := access.ApplicationRecordV0{ID: r.ID, TenantID: r.TenantID, Name: r.Name, Type: string(r.Type),
		Permissions: r.Permissions, ExpiresAt: r.ExpiresAt, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt,
		ModifiedBy: r.ModifiedBy, ModifiedAt: r.ModifiedAt, KeyHash: r.KeyHash, Rules: []access.RuleV0{}}
	for _, x := range r.Rules {
		rule := access.RuleV0{Description: x.Description, Priority: x.Priority, Container: x.Container,
			Transform: x.Transform, Permissions: x.Permissions}
		for _, c := range x.Conditions {
			rule.Conditions = append(rule.Conditions, access.ConditionV0(c))
		}
		v.Rules = append(v.Rules, rule)
	}
	return v
}

// TestApplicationRecordV0IsTodaysJSON: the version 0 fixture is what the
// Vault wrote before format version 1, json.Marshal of the record with
// the API's tags; access.ApplicationRecordV0 writes it byte for byte.
func TestApplicationRecordV0IsTodaysJSON(t *testing.T) {
	b, err := json.Marshal(applicationRecordV0FromRecord(fixedApplication()))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/records/application-v0.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(want) {
		t.Errorf("access.ApplicationRecordV0 writes\n%s\nwant\n%s", b, want)
	}
}
