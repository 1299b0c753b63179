package reactors

import (
	"testing"
	"time"

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

// TestRecords: each record of the package round-trips and refuses every
// truncation of its bytes and a key not its own; an official formula
// (no tenant) belongs only at its sys/ key.
func TestRecords(t *testing.T) {
	tk := barrier.Tenant(testTenant)
	mod := testTime.Add(time.Minute)
	reactor := &Record{ID: testID, TenantID: testTenant, Name: "r", FormulaID: otherID, Code: "x",
		Configuration: map[string]any{"k": "v", "n": 1.5}, ApplicationID: otherID, CreatedAt: testTime, ModifiedAt: &mod}
	recordtest.Check(t, "reactor", tk.Record(unit.EntityReactor, testID), reactor)
	formula := &FormulaRecord{ID: testID, TenantID: testTenant, Name: "f", Type: "custom", Code: "x",
		Configuration:     []ConfigurationDeclaration{{Name: "k", Type: "string"}},
		RequestParameters: []RequestParameter{{Name: "a.b", Type: "number", Optional: true}}, CreatedAt: testTime}
	recordtest.Check(t, "formula", tk.Record(unit.EntityReactorFormula, testID), formula)
	official := *formula
	official.TenantID = ""
	recordtest.Check(t, "official formula", barrier.OfficialFormula(testID), &official)
	if _, err := official.AppendRecord(nil, tk.Record(unit.EntityReactorFormula, testID)); err == nil {
		t.Errorf("official formula encoded under a tenant: want an error")
	}
	proxy := &ProxyRecord{ID: testID, TenantID: testTenant, Name: "p", DestinationURL: "https://example.com/",
		RequestTransform: &ProxyTransform{Code: "x"}, Application: &Ref{ID: otherID}, RequireAuth: true,
		CreatedAt: testTime, KeyHash: []byte{1}}
	recordtest.Check(t, "proxy", tk.Record(unit.EntityProxy, testID), proxy)
	for name, r := range map[string]unit.Record{"reactor": reactor, "formula": formula, "proxy": proxy} {
		if _, err := r.AppendRecord(nil, tk.Record(unit.EntityProxy, otherID)); err == nil {
			t.Errorf("%s encoded at another record's key: want an error", name)
		}
	}
}
