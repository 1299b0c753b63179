package tokenvault

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/intents"
)

// TestTokenIntentRecordWithoutAddress: an intent stored before the caps
// (testdata/records/token-intent-noaddr-v1.bin, flags 0) still decodes,
// to the fixed record without CreatedFrom, encodes back to the same
// bytes, and has no entries in the caps' indexes to remove; the fixed
// record, which has an address, has both.
func TestTokenIntentRecordWithoutAddress(t *testing.T) {
	key := barrier.Tenant(fixTenant).TokenIntent(fixIntent)
	old := readFixture(t, "token-intent-noaddr-v1.bin")
	var dec intents.Record
	if err := dec.DecodeRecord(key, old); err != nil {
		t.Fatal(err)
	}
	want := recordKindNamed(t, "token-intent").fixed().(*intents.Record)
	withAddress := *want
	want.CreatedFrom = ""
	if diff := cmp.Diff(want, &dec); diff != "" {
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

// recordKindNamed is the recordKinds entry name.
func recordKindNamed(t *testing.T, name string) recordKind {
	t.Helper()
	for _, k := range recordKinds {
		if k.name == name {
			return k
		}
	}
	t.Fatalf("no record kind %q", name)
	return recordKind{}
}
