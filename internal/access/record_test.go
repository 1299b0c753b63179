package access

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/recordtest"
)

const (
	testTenant = "0190f5a2-8c1e-7b3a-9d4e-5f6a7b8c9d0e"
	testID     = "0190f5a2-9000-7000-8000-000000000001"
	otherID    = "0190f5a2-9000-7000-8000-000000000002"
)

var testTime = time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.UTC)

// TestRecords: each record of the package round-trips, refuses every
// truncation of its bytes, and an application refuses a key that is not
// its own.
func TestRecords(t *testing.T) {
	later := testTime.Add(time.Hour)
	key := barrier.Tenant(testTenant).Record(unit.EntityApplication, testID)
	app := &ApplicationRecord{ID: testID, TenantID: testTenant, Name: "app", Type: "private",
		Permissions: []string{"token:read"}, Rules: []Rule{{Priority: 1, Container: "/a/", Transform: "mask",
			Permissions: []string{"token:read"}}}, ExpiresAt: &later, CreatedAt: testTime, KeyHash: []byte{1, 2}}
	recordtest.Check(t, "application", key, app)
	if _, err := app.AppendRecord(nil, barrier.Tenant(testTenant).Record(unit.EntityApplication, otherID)); err == nil {
		t.Errorf("application %s encoded at another id's key: want an error", testID)
	}
	recordtest.Check(t, "key lookup", barrier.Tenant(testTenant).Record(unit.EntityApplication, testID),
		&KeyRef{TenantID: testTenant, Kind: unit.EntityApplication, ID: testID})
}

// TestApplicationExpired: an application expires at its ExpiresAt, and
// never without one.
func TestApplicationExpired(t *testing.T) {
	at := testTime
	for _, tc := range []struct {
		expires *time.Time
		now     time.Time
		want    bool
	}{
		{nil, testTime, false},
		{&at, testTime.Add(-time.Nanosecond), false},
		{&at, testTime, true},
		{&at, testTime.Add(time.Second), true},
	} {
		r := &ApplicationRecord{ExpiresAt: tc.expires}
		if got := r.Expired(tc.now); got != tc.want {
			t.Errorf("Expired(%v) with ExpiresAt %v = %v, want %v", tc.now, tc.expires, got, tc.want)
		}
	}
}

// TestRulesKeepNil: the rules part keeps a nil list apart from an empty
// one, for the rules, each rule's conditions and its permissions (the
// JSON of grants, which is hashed, tells them apart).
func TestRulesKeepNil(t *testing.T) {
	for _, rules := range [][]Rule{
		nil,
		{},
		{{Priority: -3, Conditions: nil, Permissions: nil}},
		{{Description: "d", Priority: 2, Conditions: []Condition{}, Transform: "reveal", Permissions: []string{}}},
		{{Conditions: []Condition{{Attribute: "id", Operator: "starts_with", Value: "x"}}, Permissions: []string{"token:read"}}},
	} {
		b := AppendRules(nil, rules)
		d, err := unit.BinaryRecord(append([]byte{1}, b...), 1, "rules")
		if err != nil {
			t.Fatal(err)
		}
		got := ReadRules(&d)
		if err := d.End(); err != nil {
			t.Fatalf("ReadRules(%x): %v", b, err)
		}
		if diff := cmp.Diff(rules, got); diff != "" || (rules == nil) != (got == nil) {
			t.Errorf("rules %#v come back as %#v", rules, got)
		}
		for i := range got {
			if (rules[i].Conditions == nil) != (got[i].Conditions == nil) || (rules[i].Permissions == nil) != (got[i].Permissions == nil) {
				t.Errorf("rule %d: nil and empty lists mixed up: %#v, want %#v", i, got[i], rules[i])
			}
		}
	}
}

// TestGrantsHas: a permission is held directly or through any rule.
func TestGrantsHas(t *testing.T) {
	g := Grants{Permissions: []string{"token:create"}, Rules: []Rule{{Permissions: []string{"token:read"}}}}
	for perm, want := range map[string]bool{"token:create": true, "token:read": true, "token:delete": false, "": false} {
		if got := g.Has(perm); got != want {
			t.Errorf("Has(%q) = %v, want %v", perm, got, want)
		}
	}
}
