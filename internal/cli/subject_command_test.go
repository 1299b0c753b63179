package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/client"
)

// TestSubjectErasureCommands: from the command line, a data subject is
// erased and its certificate verifies, offline and against the chain, and
// a changed one does not; the subject key store backs up on its own; and
// a backup of the data taken before the erasure, restored beside the
// live subject key store, answers Gone for the subject's tokens and still
// reads another subject's.
func TestSubjectErasureCommands(t *testing.T) {
	dir := t.TempDir()
	addr, _, stop := start(t, dir, nil)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	ctx := context.Background()
	c := client.New("http://"+addr, nil)
	mgmt := readFile(t, filepath.Join(dir, "management.key"))
	app, err := c.CreateApplication(ctx, tokenvault.Credential(mgmt), tokenvault.CreateApplicationRequest{Name: "rw", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:create", "token:read"}}}})
	if err != nil {
		t.Fatal(err)
	}
	erased, err := c.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "erase me", Subject: "person-1"})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := c.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "keep me", Subject: "person-2"})
	if err != nil {
		t.Fatal(err)
	}
	server := map[string]string{"TOKENVAULT_SERVER": "http://" + addr}
	work := t.TempDir()
	dataBackup, keysBackup := filepath.Join(work, "data.db"), filepath.Join(work, "keys.db")
	opKey := filepath.Join(dir, "operator.key")
	if code, out, errOut := runCLI(t, server, "backup", "-operator-key-file", opKey, "-o", dataBackup); code != 0 {
		t.Fatalf("backup = %d %q %q", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, server, "backup", "-subject-keys", "-operator-key-file", opKey, "-o", keysBackup); code != 0 || !strings.Contains(out, "subject key store") {
		t.Fatalf("backup -subject-keys = %d %q %q", code, out, errOut)
	}

	withKey := map[string]string{"TOKENVAULT_SERVER": "http://" + addr, "TOKENVAULT_API_KEY": mgmt}
	code, out, errOut := runCLI(t, withKey, "subject", "erase", "person-1")
	if code != 0 {
		t.Fatalf("subject erase = %d %q %q", code, out, errOut)
	}
	var cert auditchain.ErasureCertificate
	if err := json.Unmarshal([]byte(out), &cert); err != nil || cert.Tokens != 1 || cert.Subject != "person-1" {
		t.Fatalf("subject erase printed %q (%v)", out, err)
	}
	certFile := filepath.Join(work, "cert.json")
	os.WriteFile(certFile, []byte(out), 0o600)
	if code, out, errOut := runCLI(t, withKey, "audit", "verify-certificate", "-certificate", certFile); code != 0 || !strings.Contains(out, "audit chain: OK") {
		t.Errorf("audit verify-certificate (online) = %d %q %q", code, out, errOut)
	}
	code, keysJSON, errOut := runCLI(t, server, "audit", "keys")
	if code != 0 {
		t.Fatalf("audit keys = %d %q", code, errOut)
	}
	keysFile := filepath.Join(work, "keys.json")
	os.WriteFile(keysFile, []byte(keysJSON), 0o600)
	if code, out, errOut := runCLI(t, nil, "audit", "verify-certificate", "-certificate", certFile, "-keys", keysFile); code != 0 || !strings.Contains(out, "signature: OK") {
		t.Errorf("audit verify-certificate -keys = %d %q %q", code, out, errOut)
	}
	changed := cert
	changed.Tokens = 0
	b, _ := json.Marshal(&changed)
	changedFile := filepath.Join(work, "changed.json")
	os.WriteFile(changedFile, b, 0o600)
	for _, env := range []map[string]string{nil, withKey} {
		args := []string{"audit", "verify-certificate", "-certificate", changedFile}
		if env == nil {
			args = append(args, "-keys", keysFile)
		}
		if code, _, errOut := runCLI(t, env, args...); code != 1 || !strings.Contains(errOut, "does not verify") {
			t.Errorf("audit verify-certificate of a changed certificate = %d %q", code, errOut)
		}
	}
	if code, out, _ := runCLI(t, withKey, "subject", "certificate", "person-1"); code != 0 || !strings.Contains(out, cert.ID) {
		t.Errorf("subject certificate = %d %q", code, out)
	}
	readerEnv := map[string]string{"TOKENVAULT_SERVER": "http://" + addr, "TOKENVAULT_API_KEY": string(app.Key)}
	if code, out, errOut := runCLI(t, readerEnv, "subject", "report", "person-2"); code != 0 || !strings.Contains(out, "keep me") {
		t.Errorf("subject report = %d %q %q", code, out, errOut)
	}
	stop()
	stopped = true

	// The data backup of before the erasure, restored beside the live
	// subject key store.
	restored := filepath.Join(t.TempDir(), "restored")
	if code, out, errOut := runCLI(t, nil, "restore", "-i", dataBackup, "-data", restored, "-master-key-file", filepath.Join(dir, "master.key")); code != 0 {
		t.Fatalf("restore = %d %q %q", code, out, errOut)
	}
	live, err := os.ReadFile(filepath.Join(dir, subjectKeysFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(restored, subjectKeysFile), live, 0o600); err != nil {
		t.Fatal(err)
	}
	addr, _, stop = start(t, restored, nil)
	defer stop()
	c = client.New("http://"+addr, nil)
	if _, err := c.GetToken(ctx, app.Key, erased.ID); !errors.Is(err, tokenvault.ErrGone) {
		t.Errorf("the erased subject's token from the restored backup: %v; want Gone", err)
	}
	if tok, err := c.GetToken(ctx, app.Key, kept.ID); err != nil || tok.Data != "keep me" {
		t.Errorf("the other subject's token from the restored backup = %+v, %v", tok, err)
	}
}
