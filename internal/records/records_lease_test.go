package records

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/lease"
)

// fixedLease is a lease held in epoch 3 (testdata/records/lease-v1.bin).
func fixedLease() *lease.Record {
	return &lease.Record{Holder: "0123456789abcdef", Epoch: 3, Expires: fixTime.Add(10 * time.Second)}
}

// TestLeaseRecordGolden pins the stored lease format (as TestRecordGolden
// does the others'): a change needs a new format version, a new fixture,
// and a decoder that still reads this one. TOKENVAULT_UPDATE_RECORDS=1
// writes the fixture.
func TestLeaseRecordGolden(t *testing.T) {
	path := filepath.Join(fixtureDir, "lease-v1.bin")
	key := barrier.Lease(lease.Linker)
	got, err := fixedLease().AppendRecord(nil, key)
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
		t.Errorf("the stored lease format changed: encoding the fixed record gives\n%x\nwant (%s)\n%x", got, path, want)
	}
	var dec lease.Record
	if err := dec.DecodeRecord(key, want); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	if diff := cmp.Diff(fixedLease(), &dec); diff != "" {
		t.Errorf("decode %s: (-want +got)\n%s", path, diff)
	}
	if err := dec.DecodeRecord(key, append(bytes.Clone(want), 0)); err == nil {
		t.Error("a lease record with a trailing byte decoded")
	}
	released := lease.Record{Holder: "0123456789abcdef", Epoch: 4}
	b, err := released.AppendRecord(nil, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := dec.DecodeRecord(key, b); err != nil || !dec.Expires.IsZero() || dec.Epoch != 4 {
		t.Errorf("a released lease reads back as %+v, %v", dec, err)
	}
}
