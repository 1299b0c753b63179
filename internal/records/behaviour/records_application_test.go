package records_test

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/records/recordfix"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// applicationOf is the API's view of an application's record, as the
// Vault's methods answer it.
func applicationOf(v *tokenvault.Vault, r *access.ApplicationRecord) *tokenvault.Application {
	return testseam.Of(v).ApplicationOf(r).(*tokenvault.Application)
}

// TestApplicationAPIFields fails when a field is added to the API's
// Application and not carried from the record (the record's own fields
// are internal/records' TestApplicationRecordFields): a field of
// Application must be filled by the root's applicationOf (from a record
// field of the same name, or say here why not) and added to this list.
func TestApplicationAPIFields(t *testing.T) {
	v := openVault(t)
	walk := func(rt reflect.Type) []string {
		paths, embedded := recordfix.FieldPaths(rt)
		for _, e := range embedded {
			t.Errorf("%s is embedded: records and API types are kept apart", e)
		}
		return paths
	}
	rules := recordfix.RuleFieldPaths
	wantApp := slices.Concat([]string{"ID", "TenantID", "Name",
		"Key", // never in a record: set by the answers of create and regenerate only
		"Type", "Permissions", "Rules"}, rules,
		[]string{"ExpiresAt", "CreatedBy", "CreatedAt", "ModifiedBy", "ModifiedAt", "AllowedOrigins", "RevealBudget",
			"FrozenAt", "FrozenReason", // the record's Frozen, flattened
		})
	if diff := cmp.Diff(wantApp, walk(reflect.TypeFor[tokenvault.Application]())); diff != "" {
		t.Errorf("Application's fields changed; access.ApplicationRecord.api (and the record, if it is stored) must follow (-want +got):\n%s", diff)
	}
	// The public application: the fixed one holds no allowed origins;
	// with a reveal budget and frozen, to see those too.
	rec := recordfix.PublicApplication()
	frozen := recordfix.FrozenApplication()
	rec.RevealBudget, rec.Frozen = frozen.RevealBudget, frozen.Frozen
	rv := reflect.ValueOf(rec).Elem()
	// api fills every field of Application but Key from the record's
	// field of the same name, and leaves Key empty.
	app := applicationOf(v, rec)
	av := reflect.ValueOf(app).Elem()
	for f := range reflect.TypeFor[tokenvault.Application]().Fields() {
		got := av.FieldByIndex(f.Index)
		if f.Name == "Key" {
			if !got.IsZero() {
				t.Errorf("api sets Key %q: a record has no key", app.Key)
			}
			continue
		}
		if f.Name == "FrozenAt" || f.Name == "FrozenReason" {
			want := any(rec.Frozen.Reason)
			if f.Name == "FrozenAt" {
				want = &rec.Frozen.At
			}
			if diff := cmp.Diff(want, got.Interface()); diff != "" {
				t.Errorf("api: Application.%s (-record's Frozen +api):\n%s", f.Name, diff)
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

// TestApplicationAPIRoundTrip: the API's JSON of an application is the
// same read back from its record (internal/records'
// TestApplicationRecordRoundTrip holds the records themselves).
func TestApplicationAPIRoundTrip(t *testing.T) {
	v := openVault(t)
	cases := []*access.ApplicationRecord{recordfix.Application()}
	// The bootstrap management application: no rules, no expiry, never
	// modified.
	cases = append(cases, &access.ApplicationRecord{ID: recordfix.App, TenantID: recordfix.Tenant, Name: "Owner",
		Type: access.Management, Permissions: access.PermissionsFor(access.Management), Rules: []access.Rule{},
		CreatedBy: recordfix.Actor, CreatedAt: recordfix.Time, KeyHash: recordfix.Application().KeyHash})
	// Odd values, as internal/records' round trip has them.
	odd := recordfix.Application()
	odd.ID = "custom-id:42"
	odd.Name = "token"
	odd.Type = "something-else"
	odd.Permissions = []string{}
	odd.Rules[0].Priority = math.MinInt64
	odd.Rules[1].Priority = math.MaxInt64
	odd.Rules[1].Description = recordfix.Token
	odd.Rules = append(odd.Rules, access.Rule{Permissions: []string{}, Conditions: []access.Condition{{}}})
	odd.KeyHash = nil
	odd.CreatedAt = time.Date(1960, 5, 6, 7, 8, 9, 1, time.FixedZone("", 5*3600+1800))
	expires := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	modified := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	odd.ExpiresAt, odd.ModifiedAt = &expires, &modified
	odd.CreatedBy, odd.ModifiedBy = "", "system"
	cases = append(cases, odd)
	for _, rec := range cases {
		key := barrier.Tenant(rec.TenantID).Record(unit.EntityApplication, rec.ID)
		b, err := rec.AppendRecord(nil, key)
		if err != nil {
			t.Fatal(err)
		}
		var got access.ApplicationRecord
		if err := got.DecodeRecord(key, b); err != nil {
			t.Fatalf("decode %x: %v", b, err)
		}
		want, _ := json.Marshal(applicationOf(v, rec))
		api, _ := json.Marshal(applicationOf(v, &got))
		if string(api) != string(want) {
			t.Errorf("the API's JSON of %s changed:\n%s\nwant\n%s", rec.ID, api, want)
		}
	}
}

// TestTenantAPIConversion: an API tenant with every field set comes back
// the same from its record, so that a field added to the API type and not
// to the record is seen here (internal/records' TestRecordAPIConversions
// does the other kinds).
func TestTenantAPIConversion(t *testing.T) {
	v := openVault(t)
	fixModified := recordfix.Time.Add(time.Hour)
	const fixMember, fixModifier = "0190f5a2-9000-7000-8000-000000000013", "0190f5a2-8c1e-7b3a-9d4e-000000000003"
	allSet := func(v any) {
		t.Helper()
		rv := reflect.ValueOf(v).Elem()
		for i := range rv.NumField() {
			if rv.Field(i).IsZero() {
				t.Errorf("%T.%s is unset in the test value: set it, and carry it in the record", v, rv.Type().Field(i).Name)
			}
		}
	}
	tenantOf := func(r any) tokenvault.Tenant { return testseam.Of(v).TenantOf(r.(*tenants.Record)).(tokenvault.Tenant) }
	tenantRecordOf := func(t *tokenvault.Tenant) *tenants.Record { return testseam.Of(v).TenantRecordOf(t) }
	tenant := &tokenvault.Tenant{ID: recordfix.Tenant, Name: "n", OwnerID: fixMember, CreatedBy: recordfix.Actor, CreatedAt: recordfix.Time,
		ModifiedBy: fixModifier, ModifiedAt: &fixModified,
		Purposes: []tokenvault.Purpose{{Name: "fraud-review", Description: "Reviewing a flagged payment"}}}
	allSet(tenant)
	if got := tenantOf(tenantRecordOf(tenant)); !cmp.Equal(*tenant, got) {
		t.Errorf("Tenant through its record: %s", cmp.Diff(*tenant, got))
	}
}

// TestLegacyApplicationRecords: applications stored in the JSON of format
// version 0 authenticate and answer as they did; a write rewrites the one
// it touches in format version 1, and the re-seal pass the rest, after
// which every key still works.
func TestLegacyApplicationRecords(t *testing.T) {
	ctx := context.Background()
	lv := newLegacyVault(t)
	apps := barrier.Tenant(lv.tid).Records(unit.EntityApplication)
	list := func() *tokenvault.Page[tokenvault.Application] {
		t.Helper()
		p, err := lv.v.ListApplications(ctx, lv.mgmt, tokenvault.ListApplicationsRequest{})
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
	err := testseam.Of(lv.v).Work.Update(ctx, func(tx *unit.Tx) error {
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
			b, _ := json.Marshal(recordfix.ApplicationV0(&r))
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
	if err != nil || app.Type != access.Management {
		t.Fatalf("the management key on a version 0 record: %+v, %v", app, err)
	}
	if _, err := lv.v.CreateToken(ctx, lv.key, tokenvault.TokenRequest{Type: unit.TypeToken, Data: "x"}); err != nil {
		t.Fatalf("the private key on a version 0 record: %v", err)
	}

	// A write rewrites the application it touches.
	lv.advance(time.Second)
	mine := want.Data[1]
	if mine.Name != "old" {
		t.Fatalf("second application is %q", mine.Name)
	}
	if _, err := lv.v.UpdateApplication(ctx, lv.mgmt, mine.ID, tokenvault.UpdateApplicationRequest{
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
	if err := testseam.Of(lv.v).Work.Update(ctx, func(tx *unit.Tx) error { tx.MarkAuthChanged(); return nil }); err != nil {
		t.Fatal(err)
	}
	if app, err := lv.v.GetApplicationByKey(ctx, lv.mgmt); err != nil || app.Type != access.Management {
		t.Errorf("the management key after the re-seal pass: %+v, %v", app, err)
	}
	if _, err := lv.v.CreateToken(ctx, lv.key, tokenvault.TokenRequest{Type: unit.TypeToken, Data: "y"}); err != nil {
		t.Errorf("the private key after the re-seal pass: %v", err)
	}
	got := list()
	want.Data[1].Name, want.Data[1].ModifiedBy, want.Data[1].ModifiedAt = "renamed", got.Data[1].ModifiedBy, got.Data[1].ModifiedAt
	if diff := cmp.Diff(want, got); diff != "" || got.Data[1].ModifiedAt == nil {
		t.Errorf("after the migration (-before +after):\n%s", diff)
	}
}

// openVault is a Vault whose seam shows the API's views of records (they
// are the same for every Vault).
func openVault(t *testing.T) *tokenvault.Vault {
	t.Helper()
	return vaulttest.NewEnv(t).V
}
