package export

import (
	"bytes"
	"crypto/ed25519"
	"testing"

	"filippo.io/age"

	"github.com/tokenvault/tokenvault/auditchain"
)

// FuzzVerify: Verify never panics on a file it is handed (what arrives
// is untrusted), and a file that is not the one the manifest describes
// never verifies.
func FuzzVerify(f *testing.F) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		f.Fatal(err)
	}
	var file bytes.Buffer
	w, err := NewWriter(&file, id.Recipient())
	if err != nil {
		f.Fatal(err)
	}
	if err := w.Write(Line{ID: "a", Type: "token", Data: []byte(`"x"`)}); err != nil {
		f.Fatal(err)
	}
	sums, err := w.Close()
	if err != nil {
		f.Fatal(err)
	}
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize))
	m := &Manifest{Format: Format, Count: sums.Count, PlaintextSize: sums.PlaintextSize, PlaintextSHA256: sums.PlaintextSHA256,
		CiphertextSize: sums.CiphertextSize, CiphertextSHA256: sums.CiphertextSHA256}
	m.Sign(key)
	keys := []auditchain.PublicKey{{ID: m.KeyID, Key: key.Public().(ed25519.PublicKey)}}
	good := file.Bytes()
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte("age-encryption.org/v1\n-> X25519 AAAA\n--- AAAA\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Verify(m, keys, bytes.NewReader(b), id)
		if err == nil && !bytes.Equal(b, good) {
			t.Fatalf("a file that is not the export verifies: %+v", v)
		}
	})
}
