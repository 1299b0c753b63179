package export

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/tokenvault/tokenvault/auditchain"
)

// fixedManifest is a manifest with every field set.
func fixedManifest() *Manifest {
	at := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	return &Manifest{Format: Format, ID: "0190f5a2-9000-7000-8000-00000000001c", TenantID: "0190f5a2-8c1e-7b3a-9d4e-000000000001",
		Filter: Filter{Container: "/pci/", Type: "card", Query: "metadata.customer:c1"}, Recipient: "age1recipient",
		Count: 3, PlaintextSize: 420, PlaintextSHA256: strings.Repeat("a", 64), CiphertextSize: 640,
		CiphertextSHA256: strings.Repeat("b", 64), StartedAt: at, FinishedAt: at.Add(time.Second),
		ActorID: "0190f5a2-8c1e-7b3a-9d4e-000000000002", ActorType: "application", ApprovalID: "0190f5a2-9000-7000-8000-00000000001b"}
}

// TestManifestSignedBytesGolden: the signed bytes of a manifest are a
// format receivers implement; a change of them fails here.
func TestManifestSignedBytesGolden(t *testing.T) {
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	m := fixedManifest()
	m.Sign(key)
	sum := sha256.Sum256(m.SignedBytes())
	const want = "0908134507d3d4a74f5301ec8080a456623e3d0fc49536acd518963285371275"
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("SHA-256 of SignedBytes = %s, want %s", got, want)
	}
	pub := auditchain.PublicKey{ID: m.KeyID, Algorithm: "Ed25519", Key: key.Public().(ed25519.PublicKey)}
	if err := m.VerifySignature([]auditchain.PublicKey{pub}); err != nil {
		t.Fatalf("VerifySignature = %v", err)
	}
	// Every field is covered.
	for name, change := range map[string]func(*Manifest){
		"format": func(m *Manifest) { m.Format = "x" }, "id": func(m *Manifest) { m.ID = "x" },
		"tenant": func(m *Manifest) { m.TenantID = "x" }, "container": func(m *Manifest) { m.Filter.Container = "/x/" },
		"type": func(m *Manifest) { m.Filter.Type = "bank" }, "query": func(m *Manifest) { m.Filter.Query = "x" },
		"recipient": func(m *Manifest) { m.Recipient = "x" }, "count": func(m *Manifest) { m.Count++ },
		"plaintext size": func(m *Manifest) { m.PlaintextSize++ }, "plaintext": func(m *Manifest) { m.PlaintextSHA256 = "x" },
		"ciphertext size": func(m *Manifest) { m.CiphertextSize++ }, "ciphertext": func(m *Manifest) { m.CiphertextSHA256 = "x" },
		"started": func(m *Manifest) { m.StartedAt = m.StartedAt.Add(1) }, "finished": func(m *Manifest) { m.FinishedAt = m.FinishedAt.Add(1) },
		"actor": func(m *Manifest) { m.ActorID = "x" }, "actor type": func(m *Manifest) { m.ActorType = "x" },
		"approval": func(m *Manifest) { m.ApprovalID = "" }, "key": func(m *Manifest) { m.KeyID = "x" },
		// A field's bytes moved to its neighbour.
		"boundary": func(m *Manifest) { m.Filter.Container, m.Filter.Type = m.Filter.Container+m.Filter.Type, "" },
	} {
		c := *m
		change(&c)
		if err := c.VerifySignature([]auditchain.PublicKey{pub}); !errors.Is(err, ErrBadSignature) {
			t.Errorf("a manifest with a changed %s verifies: %v", name, err)
		}
	}
}

// TestVerifyLongLines: a token whose line is longer than the reader's
// buffer (a large data value) verifies, and the counts hold.
func TestVerifyLongLines(t *testing.T) {
	id, _ := age.GenerateX25519Identity()
	var file bytes.Buffer
	w, err := NewWriter(&file, id.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{10, 200 << 10, 70 << 10, 0} {
		if err := w.Write(Line{ID: "id-" + string(rune('a'+n%26)), Type: "token", Data: []byte(`"` + strings.Repeat("x", n) + `"`)}); err != nil {
			t.Fatal(err)
		}
	}
	sums, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize))
	m := &Manifest{Format: Format, Count: sums.Count, PlaintextSize: sums.PlaintextSize, PlaintextSHA256: sums.PlaintextSHA256,
		CiphertextSize: sums.CiphertextSize, CiphertextSHA256: sums.CiphertextSHA256}
	m.Sign(key)
	keys := []auditchain.PublicKey{{ID: m.KeyID, Key: key.Public().(ed25519.PublicKey)}}
	v, err := Verify(m, keys, bytes.NewReader(file.Bytes()), id)
	if err != nil || v.Count != 4 || !v.Plaintext {
		t.Fatalf("Verify = %+v, %v; want 4 lines verified", v, err)
	}
	if int64(file.Len()) != sums.CiphertextSize {
		t.Errorf("ciphertext size %d, file %d", sums.CiphertextSize, file.Len())
	}
}

// TestParseRecipient: age public keys only; a private key is refused
// without being repeated.
func TestParseRecipient(t *testing.T) {
	id, _ := age.GenerateX25519Identity()
	hybrid, err := age.GenerateHybridIdentity()
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{id.Recipient().String(), hybrid.Recipient().String()} {
		if _, err := ParseRecipient(ok); err != nil {
			t.Errorf("ParseRecipient(%.20s...) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", id.String(), strings.ToLower(id.String()), "age1", "ssh-ed25519 AAAA", "hello"} {
		_, err := ParseRecipient(bad)
		if err == nil {
			t.Errorf("ParseRecipient(%q) = nil, want an error", bad)
		} else if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("ParseRecipient's error %q repeats its input", err)
		}
	}
}
