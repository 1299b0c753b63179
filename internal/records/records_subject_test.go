package records

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/subjects"
	"github.com/tokenvault/tokenvault/internal/tokens"
)

// fixSubject and fixSubjectKey are the data subject of fixedSubjectCard
// and its key (internal/subjects), fixed so that the fixture opens.
const (
	fixSubject      = "customer-42"
	fixSubjectKeyID = "00112233445566778899aabbccddeeff"
)

var fixSubjectKey = bytes.Repeat([]byte{0x5a}, 32)

// fixedSubjectCard is fixedCard naming a data subject: its Data and Mask
// are stored sealed under the subject's key, with the subject index entry
// (testdata/records/token-subject-v1.bin, flag 256).
func fixedSubjectCard() *tokens.Record {
	r := fixedCard()
	r.Subject, r.SubjectKeyID = fixSubject, fixSubjectKeyID
	r.Indexes = append(r.Indexes, "tenant/"+fixTenant+"/idx/subject/0c0d/"+fixToken)
	return r
}

// TestSubjectTokenRecord holds the stored form of a token of a data
// subject to its fixture: the fields read as they were written, Data and
// Mask absent until opened with the subject's key, present after; a
// record of a destroyed key reads Erased; a wrong key does not open it;
// and sealing binds the bytes to the record's key. The sealed bytes are
// random (a nonce): the fixture is decoded, not compared byte for byte.
// TOKENVAULT_UPDATE_RECORDS=1 writes it again.
func TestSubjectTokenRecord(t *testing.T) {
	want := fixedSubjectCard()
	key := barrier.Tenant(fixTenant).Record(tokens.Kind, fixToken)
	path := filepath.Join(fixtureDir, "token-subject-v1.bin")
	if os.Getenv("TOKENVAULT_UPDATE_RECORDS") == "1" {
		w := fixedSubjectCard()
		w.SetSubjectKey(fixSubjectKey)
		b, err := w.AppendRecord(nil, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("4242424242424242")) || bytes.Contains(b, []byte("XXXX4242")) {
		t.Fatal("token-subject-v1.bin holds the card number in clear")
	}
	ignore := cmpopts.IgnoreFields(tokens.Record{}, "Sealing", "Data", "Mask")
	var got tokens.Record
	if err := got.DecodeRecord(key, b); err != nil {
		t.Fatalf("DecodeRecord: %v", err)
	}
	if diff := cmp.Diff(want, &got, ignore); diff != "" {
		t.Errorf("token-subject-v1.bin (-want +got):\n%s", diff)
	}
	if got.Data != nil || got.Mask != nil {
		t.Errorf("DecodeRecord gave Data %s, Mask %s before the subject key opened them", got.Data, got.Mask)
	}
	if err := got.OpenSubject(bytes.Repeat([]byte{1}, 32)); err == nil {
		t.Error("OpenSubject(wrong key) = nil")
	}
	if err := got.OpenSubject(fixSubjectKey); err != nil {
		t.Fatalf("OpenSubject: %v", err)
	}
	if !bytes.Equal(got.Data, want.Data) || !bytes.Equal(got.Mask, want.Mask) {
		t.Errorf("OpenSubject: Data %s Mask %s; want %s %s", got.Data, got.Mask, want.Data, want.Mask)
	}
	// Written again (an update), it opens again.
	again, err := got.AppendRecord(nil, key)
	if err != nil {
		t.Fatal(err)
	}
	var back tokens.Record
	if err := back.DecodeRecord(key, again); err != nil || back.OpenSubject(fixSubjectKey) != nil || !bytes.Equal(back.Data, want.Data) {
		t.Errorf("round trip: %v, Data %s", err, back.Data)
	}
	// The key destroyed: Erased, no data; written back, the sealed bytes stay.
	var gone tokens.Record
	if err := gone.DecodeRecord(key, b); err != nil || gone.OpenSubject(nil) != nil || !gone.Erased || gone.Data != nil {
		t.Fatalf("OpenSubject(nil): %v, Erased %v, Data %s", err, gone.Erased, gone.Data)
	}
	kept, err := gone.AppendRecord(nil, key)
	if err != nil || !bytes.Equal(kept, b) {
		t.Errorf("an erased record written back = %v, changed %v", err, !bytes.Equal(kept, b))
	}
	// Moved to another token's key, it does not open.
	other := barrier.Tenant(fixTenant).Record(tokens.Kind, "0190f5a2-9000-7000-8000-0000000000ff")
	var moved tokens.Record
	if err := moved.DecodeRecord(other, b); err == nil && moved.OpenSubject(fixSubjectKey) == nil {
		t.Error("the sealed bytes opened under another token's key")
	}
	// A record of a subject without its key does not encode.
	if _, err := fixedSubjectCard().AppendRecord(nil, key); err == nil {
		t.Error("AppendRecord(subject, no key) = nil")
	}
}

// fixedCertificate is an erasure certificate as stored
// (testdata/records/erasure-v1.bin): a signed document, its signature
// fixed here (the record does not check it).
func fixedCertificate() *subjects.CertificateRecord {
	return &subjects.CertificateRecord{Cert: auditchain.ErasureCertificate{
		ID: "0190f5a2-9000-7000-8000-00000000001c", TenantID: fixTenant, Subject: fixSubject, Tokens: 3,
		KeyIDs: []string{fixSubjectKeyID}, KeyDestruction: auditchain.KeyDestructionDeleted,
		KeysDestroyedAt: fixTime, ErasedAt: fixTime.Add(time.Second), ErasedBy: fixActor, ErasedByType: "application",
		KeyID: "0011223344556677", Signature: bytes.Repeat([]byte{7}, 64),
	}}
}

// TestErasureCertificateRecord holds the stored certificate to its
// fixture, byte for byte, and reads it back whole.
func TestErasureCertificateRecord(t *testing.T) {
	key := subjects.CertificateKey(fixTenant, "0c0d", fixedCertificate().Cert.ID)
	path := filepath.Join(fixtureDir, "erasure-v1.bin")
	b, err := fixedCertificate().AppendRecord(nil, key)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("TOKENVAULT_UPDATE_RECORDS") == "1" {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("erasure certificate encodes as\n%q\nwant (erasure-v1.bin)\n%q", b, want)
	}
	var got subjects.CertificateRecord
	if err := got.DecodeRecord(key, want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fixedCertificate(), &got); diff != "" {
		t.Errorf("erasure-v1.bin (-want +got):\n%s", diff)
	}
	if got.Cert.Hash() != fixedCertificate().Cert.Hash() {
		t.Error("the certificate read back hashes differently")
	}
	for _, bad := range [][]byte{nil, {2}, append([]byte{1}, "{"...)} {
		var r subjects.CertificateRecord
		if err := r.DecodeRecord(key, bad); err == nil {
			t.Errorf("DecodeRecord(%q) = nil", bad)
		}
	}
}
