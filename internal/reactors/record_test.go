package reactors

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

const (
	testTenant = "0190f5a2-8c1e-7b3a-9d4e-5f6a7b8c9d0e"
	testID     = "0190f5a2-9000-7000-8000-000000000001"
	otherID    = "0190f5a2-9000-7000-8000-000000000002"
)

var testTime = time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.UTC)

// checkRecord holds rec to its encoding: it encodes at key, decodes to
// the same record, and every shorter prefix of its bytes is refused with
// an error rather than a panic or a partial record.
func checkRecord[R interface {
	unit.Record
	*T
}, T any](t *testing.T, name string, key barrier.Key, rec R) {
	t.Helper()
	b, err := rec.AppendRecord(nil, key)
	if err != nil {
		t.Fatalf("%s: AppendRecord(%s) = %v", name, key, err)
	}
	got := R(new(T))
	if err := got.DecodeRecord(key, b); err != nil {
		t.Fatalf("%s: DecodeRecord(%x) = %v", name, b, err)
	}
	if diff := cmp.Diff(rec, got); diff != "" {
		t.Errorf("%s: round trip (-want +got)\n%s", name, diff)
	}
	for n := range len(b) {
		if err := R(new(T)).DecodeRecord(key, b[:n]); err == nil {
			t.Errorf("%s: DecodeRecord of the first %d of %d bytes = nil, want an error", name, n, len(b))
		}
	}
}

// TestRecords: each record of the package round-trips and refuses every
// truncation of its bytes and a key not its own; an official formula
// (no tenant) belongs only at its sys/ key.
func TestRecords(t *testing.T) {
	tk := barrier.Tenant(testTenant)
	mod := testTime.Add(time.Minute)
	reactor := &Record{ID: testID, TenantID: testTenant, Name: "r", FormulaID: otherID, Code: "x",
		Configuration: map[string]any{"k": "v", "n": 1.5}, ApplicationID: otherID, CreatedAt: testTime, ModifiedAt: &mod}
	checkRecord(t, "reactor", tk.Record(unit.EntityReactor, testID), reactor)
	formula := &FormulaRecord{ID: testID, TenantID: testTenant, Name: "f", Type: "custom", Code: "x",
		Configuration:     []ConfigurationDeclaration{{Name: "k", Type: "string"}},
		RequestParameters: []RequestParameter{{Name: "a.b", Type: "number", Optional: true}}, CreatedAt: testTime}
	checkRecord(t, "formula", tk.Record(unit.EntityReactorFormula, testID), formula)
	official := *formula
	official.TenantID = ""
	checkRecord(t, "official formula", barrier.OfficialFormula(testID), &official)
	if _, err := official.AppendRecord(nil, tk.Record(unit.EntityReactorFormula, testID)); err == nil {
		t.Errorf("official formula encoded under a tenant: want an error")
	}
	proxy := &ProxyRecord{ID: testID, TenantID: testTenant, Name: "p", DestinationURL: "https://example.com/",
		RequestTransform: &ProxyTransform{Code: "x"}, Application: &Ref{ID: otherID}, RequireAuth: true,
		CreatedAt: testTime, KeyHash: []byte{1}}
	checkRecord(t, "proxy", tk.Record(unit.EntityProxy, testID), proxy)
	for name, r := range map[string]unit.Record{"reactor": reactor, "formula": formula, "proxy": proxy} {
		if _, err := r.AppendRecord(nil, tk.Record(unit.EntityProxy, otherID)); err == nil {
			t.Errorf("%s encoded at another record's key: want an error", name)
		}
	}
}
