package barrier

import (
	"bytes"
	"context"
	"testing"

	"github.com/tokenvault/tokenvault/internal/fpe"
)

// TestFPEKeyOutlivesRotation: a data key rotation keeps the FPE key (the
// same value enciphers the same way), two tenants' keys differ, and the
// FPE key is not a MAC the index key could make of its label.
func TestFPEKeyOutlivesRotation(t *testing.T) {
	digits, _ := fpe.NewAlphabet(fpe.Digits)
	enc := func(ks *Keys) string {
		s, err := ks.FPE().EncryptString(digits, "4242424242424242", nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, err := NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := a.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if enc(a) != enc(rotated) {
		t.Error("rotating the data key changed the FPE key")
	}
	b, _ := NewKeys()
	if enc(a) == enc(b) {
		t.Error("two keyrings share an FPE key")
	}
	ids, _ := a.FPEIDs().EncryptString(digits, "4242424242424242", nil)
	if ids == enc(a) {
		t.Error("token ids and stateless encodings share a key")
	}
	if a.FPE() != a.FPE() {
		t.Error("FPE is derived again on every call")
	}
	// Under the MAC of the label as a key, the same value must encipher
	// differently.
	mk, err := fpe.NewFF1(a.MAC([]byte(fpeKeyLabel)))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := mk.EncryptString(digits, "4242424242424242", nil); s == enc(a) || bytes.Equal(a.MAC([]byte(fpeKeyLabel)), a.indexKey) {
		t.Error("the FPE key equals a MAC of its label")
	}
}

// plainWrapper wraps nothing: for tests of what a keyring holds.
type plainWrapper struct{}

func (plainWrapper) WrapKeys(_ context.Context, _ string, p []byte) ([]byte, error) {
	return bytes.Clone(p), nil
}
func (plainWrapper) UnwrapKeys(_ context.Context, _ string, raw []byte) ([]byte, error) {
	return bytes.Clone(raw), nil
}

// TestFPEKeyVersions: a keyring starts at FPE version 1, whose keys are
// the ones derived from the index key before versions existed; RotateFPE
// adds version 2 with new keys (both of them) while version 1 still
// enciphers as before; a data key rotation and a wrap and unwrap keep
// every version; an unknown version is reported as missing.
func TestFPEKeyVersions(t *testing.T) {
	digits, _ := fpe.NewAlphabet(fpe.Digits)
	enc := func(f *fpe.FF1) string {
		t.Helper()
		s, err := f.EncryptString(digits, "4242424242424242", nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, err := NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	if a.FPEVersion() != FirstFPEVersion {
		t.Fatalf("FPEVersion of a new keyring = %d, want %d", a.FPEVersion(), FirstFPEVersion)
	}
	// Version 1 is what every keyring had before versions: the keys
	// derived from the index key.
	if enc(a.FPE()) != enc(deriveFF1(a.indexKey, fpeKeyLabel)) || enc(a.FPEIDs()) != enc(deriveFF1(a.indexKey, fpeIDKeyLabel)) {
		t.Fatal("version 1 is not the keys derived from the index key")
	}
	b, err := a.RotateFPE()
	if err != nil {
		t.Fatal(err)
	}
	if b.FPEVersion() != 2 {
		t.Fatalf("FPEVersion after RotateFPE = %d, want 2", b.FPEVersion())
	}
	if enc(b.FPE()) == enc(a.FPE()) || enc(b.FPEIDs()) == enc(a.FPEIDs()) || enc(b.FPE()) == enc(b.FPEIDs()) {
		t.Error("RotateFPE did not give two new, distinct keys")
	}
	if f, ok := b.FPEAt(1); !ok || enc(f) != enc(a.FPE()) {
		t.Error("version 1 does not encipher as before the rotation")
	}
	if f, ok := b.FPEIDsAt(1); !ok || enc(f) != enc(a.FPEIDs()) {
		t.Error("version 1's token id key changed with the rotation")
	}
	if _, ok := b.FPEAt(3); ok {
		t.Error("FPEAt(3) found a version that was never made")
	}
	if _, ok := b.FPEAt(0); ok {
		t.Error("FPEAt(0) found a version")
	}
	c, err := b.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if c.FPEVersion() != 2 || enc(c.FPE()) != enc(b.FPE()) {
		t.Error("a data key rotation changed the FPE keys")
	}
	br := New(Config{Wrapper: plainWrapper{}})
	raw, err := br.wrap(context.Background(), "k", c)
	if err != nil {
		t.Fatal(err)
	}
	d, err := br.UnwrapKeys(context.Background(), "k", raw)
	if err != nil {
		t.Fatal(err)
	}
	if d.FPEVersion() != 2 || enc(d.FPE()) != enc(b.FPE()) {
		t.Error("the wrapped keyring lost its FPE versions")
	}
	if f, ok := d.FPEAt(1); !ok || enc(f) != enc(a.FPE()) {
		t.Error("the wrapped keyring lost FPE version 1")
	}
}
