package keyenvelope

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEnvelope pins the envelope's bytes, its bounds and its legacy form:
// keyrings in stores are in this format.
func TestEnvelope(t *testing.T) {
	w := Envelope{Kind: "pkcs11", KeyID: "vault-root", Version: "0a1b", Ciphertext: []byte{1, 2, 3}}
	b, err := Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte{2, 6}, "pkcs11\x0avault-root\x040a1b\x01\x02\x03"...)
	if !bytes.Equal(b, want) {
		t.Errorf("Marshal = %q, want %q", b, want)
	}
	got, legacy, err := Unmarshal(b)
	if err != nil || legacy || !cmp.Equal(got, w) {
		t.Errorf("Unmarshal = %+v, %v, %v; want %+v", got, legacy, err, w)
	}
	for n := range len(b) - 3 { // cut inside the header
		if _, _, err := Unmarshal(b[:n]); err == nil {
			t.Errorf("Unmarshal of %d bytes succeeded", n)
		}
	}
	for _, bad := range []Envelope{{KeyID: "k"}, {Kind: string(make([]byte, 33))}, {Kind: "k", KeyID: string(make([]byte, 256))}, {Kind: "k", Version: string(make([]byte, 256))}} {
		if _, err := Marshal(bad); err == nil {
			t.Errorf("Marshal(kind %d bytes, key id %d, version %d) succeeded", len(bad.Kind), len(bad.KeyID), len(bad.Version))
		}
	}
	legacyRaw := []byte{1, 0, 0, 0, 7, 9, 9}
	got, legacy, err = Unmarshal(legacyRaw)
	if err != nil || !legacy || got.Kind != "local" || !bytes.Equal(got.Ciphertext, legacyRaw) {
		t.Errorf("Unmarshal(legacy) = %+v, %v, %v", got, legacy, err)
	}
	if _, _, err := Unmarshal([]byte{3, 0, 0, 0}); err == nil {
		t.Error("Unmarshal of an unknown version succeeded")
	}
}

// FuzzEnvelope: parsing never panics, and what parses marshals back to
// the same bytes.
func FuzzEnvelope(f *testing.F) {
	f.Add([]byte{2, 5, 'l', 'o', 'c', 'a', 'l', 1, 'a', 1, '1', 9})
	f.Add([]byte{1, 0, 0, 0, 1})
	f.Add([]byte{2, 200})
	f.Fuzz(func(t *testing.T, b []byte) {
		w, legacy, err := Unmarshal(b)
		if err != nil || legacy || w.Kind == "" || len(w.Kind) > MaxKindLen {
			return
		}
		again, err := Marshal(w)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("%x parsed as %+v, marshals to %x, %v", b, w, again, err)
		}
	})
}
