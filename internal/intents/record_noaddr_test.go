package intents

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/barrier"
)

// The golden records of token intents, in the root's testdata/records
// (the root's records tests pin every kind's bytes there), and the key
// they were written at.
const (
	fixTenant = "0190f5a2-8c1e-7b3a-9d4e-5f6a7b8c9d0e"
	fixIntent = "0190f5a2-9000-7000-8000-000000000017"
)

// readFixture reads the golden record name.
func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "records", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecordWithoutAddress: an intent stored before the caps
// (token-intent-noaddr-v1.bin, flags 0) still decodes, to the fixed
// record (token-intent-v1.bin) without CreatedFrom, encodes back to the
// same bytes, and has no entries in the caps' indexes to remove; the
// fixed record, which has an address, has both.
func TestRecordWithoutAddress(t *testing.T) {
	t.Parallel()
	key := barrier.Tenant(fixTenant).TokenIntent(fixIntent)
	var withAddress Record
	if err := withAddress.DecodeRecord(key, readFixture(t, "token-intent-v1.bin")); err != nil {
		t.Fatal(err)
	}
	if withAddress.CreatedFrom == "" {
		t.Fatalf("token-intent-v1.bin decodes without an address: %+v", withAddress)
	}
	old := readFixture(t, "token-intent-noaddr-v1.bin")
	var dec Record
	if err := dec.DecodeRecord(key, old); err != nil {
		t.Fatal(err)
	}
	want := withAddress
	want.CreatedFrom = ""
	if diff := cmp.Diff(&want, &dec); diff != "" {
		t.Errorf("decode: (-want +got)\n%s", diff)
	}
	if got, err := dec.AppendRecord(nil, key); err != nil || !bytes.Equal(got, old) {
		t.Errorf("encoding again: %x, %v; want %x", got, err, old)
	}
	if keys := dec.IndexKeys(); keys != nil {
		t.Errorf("index keys of an intent without address: %v", keys)
	}
	if keys := withAddress.IndexKeys(); len(keys) != 2 {
		t.Errorf("index keys of an intent with an address: %v", keys)
	}
}
