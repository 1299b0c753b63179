// Package subjects_test holds the behaviour tests of data subjects
// (erasure, certificates, access reports) through a Vault's public
// methods (internal/vaulttest).
package subjects_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
	"github.com/tokenvault/tokenvault/store/memory"
)

var ctx = context.Background()

// openBolt opens the bbolt file path.
func openBolt(t *testing.T, path string) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(path, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatalf("bolt.Open(%s): %v", path, err)
	}
	return s
}

// openBoltB is openBolt for a benchmark.
func openBoltB(b *testing.B, path string) *bolt.Store {
	b.Helper()
	s, err := bolt.Open(path, &bolt.Options{NoSync: true})
	if err != nil {
		b.Fatalf("bolt.Open(%s): %v", path, err)
	}
	return s
}

// subjectEnv is a Vault on data store s with the subject key store keys.
func subjectEnv(t *testing.T, s, keys store.Store) *vaulttest.Env {
	t.Helper()
	return vaulttest.NewEnvOn(t, s, func(o *tokenvault.Options) { o.SubjectKeys = keys })
}

func tokenize(t *testing.T, v *tokenvault.Vault, key tokenvault.Credential, subject, data string) string {
	t.Helper()
	tok, err := v.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "token", Data: data, Subject: subject})
	if err != nil {
		t.Fatalf("CreateToken(subject %q): %v", subject, err)
	}
	if tok.Subject != subject {
		t.Fatalf("CreateToken(subject %q).Subject = %q", subject, tok.Subject)
	}
	return tok.ID
}

func wantData(t *testing.T, v *tokenvault.Vault, key tokenvault.Credential, id, want string) {
	t.Helper()
	tok, err := v.GetToken(ctx, key, id)
	if err != nil || tok.Data != want {
		t.Fatalf("GetToken(%s) = %v, %v; want data %q", id, tok, err, want)
	}
}

// TestEraseSubjectOutlivesABackup: a backup of the data store taken
// before an erasure, restored after it (the subject key store not
// restored), cannot read the erased subject's tokens (Gone), lists none
// of them, and still reads another subject's; the certificate verifies
// with the audit keys and a changed one does not; erasing again finishes
// on the restored copy.
func TestEraseSubjectOutlivesABackup(t *testing.T) {
	dir := t.TempDir()
	keys := openBolt(t, filepath.Join(dir, "subject-keys.db"))
	defer keys.Close()
	e := subjectEnv(t, openBolt(t, filepath.Join(dir, "vault.db")), keys)
	rw := e.Reader(t, "reveal", tokenvault.PermTokenCreate, tokenvault.PermTokenRead, tokenvault.PermTokenSearch, tokenvault.PermTokenDelete)
	eraser := e.MgmtWith(t, tokenvault.PermSubjectErase, tokenvault.PermLogRead)

	alice1 := tokenize(t, e.V, rw.Key, "alice-1", "alice's card")
	alice2 := tokenize(t, e.V, rw.Key, "alice-1", "alice's iban")
	bob := tokenize(t, e.V, rw.Key, "bob-2", "bob's card")
	plain := tokenize(t, e.V, rw.Key, "", "nobody's")
	wantData(t, e.V, rw.Key, alice1, "alice's card")

	found, err := e.V.SearchTokens(ctx, rw.Key, tokenvault.SearchTokensRequest{Query: "subject:alice-1"})
	if err != nil || len(found.Data) != 2 {
		t.Fatalf("SearchTokens(subject:alice-1) = %v, %v; want 2 tokens", found, err)
	}

	var backup bytes.Buffer
	if err := e.V.Backup(ctx, &backup); err != nil {
		t.Fatalf("Backup: %v", err)
	}

	cert, err := e.V.EraseSubject(ctx, eraser, "alice-1")
	if err != nil {
		t.Fatalf("EraseSubject: %v", err)
	}
	if cert.Tokens != 2 || len(cert.KeyIDs) != 1 || cert.Subject != "alice-1" || cert.TenantID != e.Boot.Tenant.ID {
		t.Fatalf("EraseSubject = %+v; want 2 tokens, 1 key, subject alice-1", cert)
	}
	for _, id := range []string{alice1, alice2} {
		_, err := e.V.GetToken(ctx, rw.Key, id)
		vaulttest.WantKind(t, "GetToken(erased)", err, tokenvault.NotFound)
	}
	wantData(t, e.V, rw.Key, bob, "bob's card")
	wantData(t, e.V, rw.Key, plain, "nobody's")

	// The certificate verifies with the published keys; a changed one does not.
	pubs, err := e.V.AuditKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := auditchain.VerifyCertificate(cert, pubs); err != nil {
		t.Fatalf("VerifyCertificate: %v", err)
	}
	changed := *cert
	changed.Tokens = 1
	if err := auditchain.VerifyCertificate(&changed, pubs); err == nil {
		t.Fatal("VerifyCertificate(changed) = nil")
	}
	got, err := e.V.SubjectCertificate(ctx, eraser, "alice-1")
	if err != nil || got.Hash() != cert.Hash() {
		t.Fatalf("SubjectCertificate = %+v, %v; want the erasure's", got, err)
	}
	// A repeat finds nothing to erase and answers the same certificate.
	again, err := e.V.EraseSubject(ctx, eraser, "alice-1")
	if err != nil || again.ID != cert.ID {
		t.Fatalf("EraseSubject again = %+v, %v; want certificate %s", again, err, cert.ID)
	}
	// The erasure's line names the certificate's hash.
	logs, err := e.V.ListLogs(ctx, eraser, tokenvault.ListLogsRequest{EntityType: "subject", EntityID: cert.ID})
	if err != nil || len(logs.Data) != 1 || logs.Data[0].Message != auditchain.ErasureMessage(cert.Hash()) {
		t.Fatalf("ListLogs(subject %s) = %+v, %v", cert.ID, logs, err)
	}

	// Restore the data store's backup beside the live subject key store.
	e.V.Close()
	restored := filepath.Join(dir, "restored.db")
	if err := os.WriteFile(restored, backup.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := openBolt(t, restored)
	defer rs.Close()
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: rs, SubjectKeys: keys, Now: e.Clock.Now,
		Keys: tokenvault.KeyOptions{MasterKey: e.Key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatalf("Open(restored): %v", err)
	}
	defer v.Close()
	for _, id := range []string{alice1, alice2} {
		_, err := v.GetToken(ctx, rw.Key, id)
		vaulttest.WantKind(t, "GetToken(restored, erased)", err, tokenvault.Gone)
	}
	wantData(t, v, rw.Key, bob, "bob's card")
	wantData(t, v, rw.Key, plain, "nobody's")
	list, err := v.ListTokens(ctx, rw.Key, tokenvault.ListTokensRequest{})
	if err != nil || len(list.Data) != 2 {
		t.Fatalf("ListTokens(restored) = %v, %v; want bob's and the plain token", list, err)
	}
	found, err = v.SearchTokens(ctx, rw.Key, tokenvault.SearchTokensRequest{Query: "subject:alice-1"})
	if err != nil || len(found.Data) != 0 {
		t.Fatalf("SearchTokens(restored, subject:alice-1) = %v, %v; want none", found, err)
	}
	// Erasing again on the restored copy removes what came back.
	again, err = v.EraseSubject(ctx, eraser, "alice-1")
	if err != nil || again.Tokens != 2 || len(again.KeyIDs) != 1 || again.KeyIDs[0] != cert.KeyIDs[0] {
		t.Fatalf("EraseSubject(restored) = %+v, %v; want 2 tokens of key %v", again, err, cert.KeyIDs)
	}
	_, err = v.GetToken(ctx, rw.Key, alice1)
	vaulttest.WantKind(t, "GetToken(restored, erased again)", err, tokenvault.NotFound)
}

// TestSubjectNeedsAKeyStore: without Options.SubjectKeys, a token with a
// subject is Unavailable, and nothing is written: there is no subject to
// erase (NotFound).
func TestSubjectNeedsAKeyStore(t *testing.T) {
	e := vaulttest.NewEnv(t)
	rw := e.Reader(t, "reveal", tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
	_, err := e.V.CreateToken(ctx, rw.Key, tokenvault.TokenRequest{Type: "token", Data: "x", Subject: "alice"})
	vaulttest.WantKind(t, "CreateToken(subject, no key store)", err, tokenvault.Unavailable)
	_, err = e.V.EraseSubject(ctx, e.MgmtWith(t, tokenvault.PermSubjectErase), "alice")
	vaulttest.WantKind(t, "EraseSubject(no key store)", err, tokenvault.NotFound)
}

// TestSubjectValidation: a subject is bounded and plain; it cannot be
// changed by an update; erasing needs subject:erase.
func TestSubjectValidation(t *testing.T) {
	e := subjectEnv(t, memory.New(), memory.New())
	rw := e.Reader(t, "reveal", tokenvault.PermTokenCreate, tokenvault.PermTokenRead, tokenvault.PermTokenUpdate)
	for _, bad := range []string{" alice", "a/b", "a\x00b", string(bytes.Repeat([]byte("a"), 201))} {
		_, err := e.V.CreateToken(ctx, rw.Key, tokenvault.TokenRequest{Type: "token", Data: "x", Subject: bad})
		vaulttest.WantField(t, err, "subject")
	}
	id := tokenize(t, e.V, rw.Key, "carol", "carol's")
	// A Tokenize body's token requests carry a subject too.
	body, err := e.V.Tokenize(ctx, rw.Key, map[string]any{"card": map[string]any{"type": "token", "data": "carol's other", "subject": "carol"}})
	if err != nil {
		t.Fatalf("Tokenize(subject) = %v", err)
	}
	if tok, ok := body.(map[string]any)["card"].(*tokenvault.Token); !ok || tok.Subject != "carol" {
		t.Fatalf("Tokenize(subject) = %#v", body)
	}
	_, err = e.V.UpdateToken(ctx, rw.Key, id, json.RawMessage(`{"subject": "dave"}`))
	vaulttest.WantField(t, err, "subject")
	tok, err := e.V.UpdateToken(ctx, rw.Key, id, json.RawMessage(`{"data": "carol's new"}`))
	if err != nil || tok.Subject != "carol" {
		t.Fatalf("UpdateToken(data) = %+v, %v; want subject kept", tok, err)
	}
	wantData(t, e.V, rw.Key, id, "carol's new")
	_, err = e.V.EraseSubject(ctx, e.MgmtWith(t, tokenvault.PermLogRead), "carol")
	vaulttest.WantKind(t, "EraseSubject(without subject:erase)", err, tokenvault.PermissionDenied)
	_, err = e.V.EraseSubject(ctx, rw.Key, "carol")
	vaulttest.WantKind(t, "EraseSubject(private key)", err, tokenvault.PermissionDenied)
}

// TestOlderSubjectKeyStoreIsErasedAgain: a subject key store restored
// from a backup older than an erasure gets the erased keys destroyed
// again when the Vault opens on the data store that holds the
// certificate, so that a data backup of before the erasure, restored
// later, still cannot read the subject.
func TestOlderSubjectKeyStoreIsErasedAgain(t *testing.T) {
	dir := t.TempDir()
	dataPath, keysPath := filepath.Join(dir, "vault.db"), filepath.Join(dir, "subject-keys.db")
	keys := openBolt(t, keysPath)
	e := subjectEnv(t, openBolt(t, dataPath), keys)
	rw := e.Reader(t, "reveal", tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
	eraser := e.MgmtWith(t, tokenvault.PermSubjectErase)
	old := tokenize(t, e.V, rw.Key, "erin", "erin's")
	other := tokenize(t, e.V, rw.Key, "frank", "frank's")
	var dataBackup, keysBackup bytes.Buffer
	if err := e.V.Backup(ctx, &dataBackup); err != nil {
		t.Fatal(err)
	}
	if err := e.V.BackupSubjectKeys(ctx, &keysBackup); err != nil {
		t.Fatal(err)
	}
	if _, err := e.V.EraseSubject(ctx, eraser, "erin"); err != nil {
		t.Fatal(err)
	}
	e.V.Close()
	e.Store.Close()
	keys.Close()

	// The key store comes back from its backup of before the erasure.
	if err := os.WriteFile(keysPath, keysBackup.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	open := func(data string) (*tokenvault.Vault, func()) {
		t.Helper()
		ds, ks := openBolt(t, data), openBolt(t, keysPath)
		v, err := tokenvault.Open(ctx, tokenvault.Options{Store: ds, SubjectKeys: ks, Now: e.Clock.Now,
			Keys: tokenvault.KeyOptions{MasterKey: e.Key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return v, func() { v.Close(); ds.Close(); ks.Close() }
	}
	_, closeLive := open(dataPath) // the live data: its certificate names the key
	closeLive()

	restored := filepath.Join(dir, "restored.db")
	if err := os.WriteFile(restored, dataBackup.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	v, closeRestored := open(restored)
	defer closeRestored()
	_, err := v.GetToken(ctx, rw.Key, old)
	vaulttest.WantKind(t, "GetToken(erased; key store older than the erasure)", err, tokenvault.Gone)
	wantData(t, v, rw.Key, other, "frank's")
}

// TestDeleteTenantDeletesItsSubjectKeys: deleting a tenant removes its
// subject keys from the key store, and no other tenant's.
func TestDeleteTenantDeletesItsSubjectKeys(t *testing.T) {
	keys := memory.New()
	e := subjectEnv(t, memory.New(), keys)
	rw := e.Reader(t, "reveal", tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
	tokenize(t, e.V, rw.Key, "gail", "gail's")
	other := e.Tenant(t, "Other")
	app, err := e.V.CreateApplication(ctx, other.Application.Key, tokenvault.CreateApplicationRequest{Name: "rw", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}}}})
	if err != nil {
		t.Fatal(err)
	}
	kept := tokenize(t, e.V, app.Key, "gail", "other gail's")
	count := func(tid string) int {
		n := 0
		keys.View(ctx, func(tx store.Tx) error {
			return tx.Scan([]byte("subject-key/"+tid+"/"), nil, 0, func(_, _ []byte) error { n++; return nil })
		})
		return n
	}
	if count(e.Boot.Tenant.ID) != 1 || count(other.Tenant.ID) != 1 {
		t.Fatalf("subject keys before: %d, %d; want 1, 1", count(e.Boot.Tenant.ID), count(other.Tenant.ID))
	}
	if err := e.V.DeleteTenant(ctx, e.Boot.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(e.Boot.Tenant.ID); n != 0 {
		t.Errorf("the deleted tenant's subject keys: %d left", n)
	}
	wantData(t, e.V, app.Key, kept, "other gail's")
}

// TestSubjectAccessReport: the report holds the subject's tokens as the
// caller's rules show them, and, for a key holding token:access:read,
// every access to them, the reads just made included (bbolt appends
// them); a subject the tenant holds nothing of is NotFound; a key with
// neither permission is PermissionDenied.
func TestSubjectAccessReport(t *testing.T) {
	dir := t.TempDir()
	keys := openBolt(t, filepath.Join(dir, "subject-keys.db"))
	defer keys.Close()
	e := subjectEnv(t, openBolt(t, filepath.Join(dir, "vault.db")), keys)
	rw := e.Reader(t, "reveal", tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
	masker := e.Reader(t, "mask", tokenvault.PermTokenRead)
	auditor := e.MgmtWith(t, tokenvault.PermTokenAccessRead)
	id := tokenize(t, e.V, rw.Key, "hana", "hana's")
	wantData(t, e.V, rw.Key, id, "hana's")

	r, err := e.V.SubjectAccessReport(ctx, rw.Key, "hana")
	if err != nil || len(r.Tokens) != 1 || r.Tokens[0].Data != "hana's" || r.Accesses != nil {
		t.Fatalf("SubjectAccessReport(reader) = %+v, %v", r, err)
	}
	r, err = e.V.SubjectAccessReport(ctx, masker.Key, "hana")
	if err != nil || len(r.Tokens) != 1 || r.Tokens[0].Data == "hana's" {
		t.Fatalf("SubjectAccessReport(masked) = %+v, %v; want the data not in clear", r, err)
	}
	r, err = e.V.SubjectAccessReport(ctx, auditor, "hana")
	if err != nil || len(r.Tokens) != 1 || r.Tokens[0].Data != nil || r.Tokens[0].Subject != "" {
		t.Fatalf("SubjectAccessReport(auditor) = %+v, %v; want the token without content", r, err)
	}
	channels := map[string]int{}
	for _, a := range r.Accesses {
		if a.TokenID != id {
			t.Errorf("access %+v is of another token", a)
		}
		channels[a.Channel]++
	}
	if channels[tokenvault.ChannelGet] < 3 { // GetToken, and the two reports' reads
		t.Errorf("SubjectAccessReport(auditor).Accesses = %+v; want the three reads", r.Accesses)
	}
	_, err = e.V.SubjectAccessReport(ctx, auditor, "nobody")
	vaulttest.WantKind(t, "SubjectAccessReport(unknown subject)", err, tokenvault.NotFound)
	_, err = e.V.SubjectAccessReport(ctx, e.MgmtWith(t, tokenvault.PermLogRead), "hana")
	vaulttest.WantKind(t, "SubjectAccessReport(without either permission)", err, tokenvault.PermissionDenied)
}
