package tokens

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
	checkRecord(t, "token", tk.Record(Kind, testID), tok)
	if _, err := tok.AppendRecord(nil, tk.Record(Kind, otherID)); err == nil {
		t.Errorf("token %s encoded at another id's key: want an error", testID)
	}
	checkRecord(t, "list shape", tk.Record("token_shape", "ab"), &ShapeRecord{Type: "card", Containers: []string{"/a/", "/b/"}})
	checkRecord(t, "fingerprint place", barrier.SysFingerprints, &FingerprintPlace{InMemory: true})
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
	checkRecord(t, "cvc scan", barrier.SysCVCScan, &LegacyCVCScan{Tenant: testTenant, After: "k", Done: true})
	checkRecord(t, "list build", barrier.SysLists, &ListBuild{Tenant: testTenant, After: "k"})
}
