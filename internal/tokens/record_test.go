package tokens

import (
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit/recordtest"
)

const (
	testTenant = "0190f5a2-8c1e-7b3a-9d4e-5f6a7b8c9d0e"
	testID     = "0190f5a2-9000-7000-8000-000000000001"
	otherID    = "0190f5a2-9000-7000-8000-000000000002"
)

var testTime = time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.UTC)

// TestRecords: each record of the package round-trips and refuses every
// truncation of its bytes; a token refuses a key not its own, and keeps
// its index entries, those it spells short and others, as they were.
func TestRecords(t *testing.T) {
	tk := barrier.Tenant(testTenant)
	exp, cvc := testTime.Add(time.Hour), testTime.Add(time.Minute)
	fp := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tok := &Record{ID: testID, TenantID: testTenant, Type: "card", Fingerprint: fp, FingerprintExpression: "{{ data }}",
		Containers: []string{"/a/"}, Metadata: map[string]string{"b": "2", "a": "1"}, SearchIndexes: []string{"s"},
		DeduplicateToken: true, ExpiresAt: &exp, CreatedBy: otherID, CreatedAt: testTime, CVCAt: &cvc,
		Data: []byte(`{"number":"4242"}`), Mask: []byte(`"4242"`), MaskExpression: []byte(`"{{ data }}"`), AliasID: true,
		Indexes: []string{tk.FingerprintIndex(fp).Key(testID).String(), tk.Expiry(exp, Kind, testID).String(), "tenant/" + testTenant + "/somewhere/else"}}
	recordtest.Check(t, "token", tk.Record(Kind, testID), tok)
	if _, err := tok.AppendRecord(nil, tk.Record(Kind, otherID)); err == nil {
		t.Errorf("token %s encoded at another id's key: want an error", testID)
	}
	recordtest.Check(t, "list shape", tk.Record("token_shape", "ab"), &ShapeRecord{Type: "card", Containers: []string{"/a/", "/b/"}})
	recordtest.Check(t, "fingerprint place", barrier.SysFingerprints, &FingerprintPlace{InMemory: true})
}

// TestExpired: a token expires at its ExpiresAt, and never without one.
func TestExpired(t *testing.T) {
	at := testTime
	for _, tc := range []struct {
		expires *time.Time
		now     time.Time
		want    bool
	}{
		{nil, testTime, false},
		{&at, testTime.Add(-time.Nanosecond), false},
		{&at, testTime, true},
	} {
		if got := (&Record{ExpiresAt: tc.expires}).Expired(tc.now); got != tc.want {
			t.Errorf("Expired(%v) with ExpiresAt %v = %v, want %v", tc.now, tc.expires, got, tc.want)
		}
	}
}

// TestScans: the two scans' progress round-trips, each in its own format
// version byte.
func TestScans(t *testing.T) {
	recordtest.Check(t, "cvc scan", barrier.SysCVCScan, &LegacyCVCScan{Tenant: testTenant, After: "k", Done: true})
	recordtest.Check(t, "list build", barrier.SysLists, &ListBuild{Tenant: testTenant, After: "k"})
}
