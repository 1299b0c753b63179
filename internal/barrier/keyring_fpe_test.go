package barrier

import (
	"bytes"
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
