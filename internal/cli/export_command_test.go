package cli

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestExportCommand: export writes FILE and FILE.manifest.json through a
// running server; export verify accepts them with the vault's keys and
// the recipient's identity, and refuses a changed file or manifest; a
// private key is refused and leaves no FILE; a missing flag is a usage
// error.
func TestExportCommand(t *testing.T) {
	ctx := context.Background()
	master := make([]byte, 32)
	rand.Read(master)
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: master},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	srv := httptest.NewServer(httpapi.New(v, httpapi.Options{}))
	defer srv.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "be", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"/a/", "/a/", "/b/"} {
		if _, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x" + c, Containers: []string{c}}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	id, _ := age.GenerateX25519Identity()
	idFile := filepath.Join(dir, "identity.txt")
	keyFile := filepath.Join(dir, "mgmt.key")
	keysFile := filepath.Join(dir, "keys.json")
	os.WriteFile(idFile, []byte(id.String()+"\n"), 0o600)
	os.WriteFile(keyFile, []byte(boot.Application.Key+"\n"), 0o600)
	keys, _ := v.AuditKeys(ctx)
	kb, _ := json.Marshal(auditKeysFile{Keys: keys})
	os.WriteFile(keysFile, kb, 0o600)
	out := filepath.Join(dir, "tokens.age")
	env := map[string]string{"TOKENVAULT_SERVER": srv.URL}

	code, stdout, errOut := runCLI(t, env, "export", "-key-file", keyFile, "-recipient", id.Recipient().String(), "-container", "/a/", "-out", out)
	if code != 0 || !strings.Contains(stdout, "exported 2 tokens") {
		t.Fatalf("export = %d\n%s%s", code, stdout, errOut)
	}
	var m tokenvault.ExportManifest
	mb, err := os.ReadFile(out + ".manifest.json")
	if err != nil || json.Unmarshal(mb, &m) != nil || m.Count != 2 || m.Filter.Container != "/a/" {
		t.Fatalf("manifest %s, %v", mb, err)
	}
	code, stdout, errOut = runCLI(t, env, "export", "verify", "-manifest", out+".manifest.json", "-keys", keysFile, "-identity", idFile, out)
	if code != 0 || strings.Contains(stdout, "FAILED") || !strings.Contains(stdout, "content (2 tokens)") {
		t.Fatalf("export verify = %d\n%s%s", code, stdout, errOut)
	}

	file, _ := os.ReadFile(out)
	file[len(file)-5] ^= 1
	changed := filepath.Join(dir, "changed.age")
	os.WriteFile(changed, file, 0o600)
	if code, stdout, _ := runCLI(t, env, "export", "verify", "-manifest", out+".manifest.json", "-keys", keysFile, changed); code != 1 ||
		!strings.Contains(stdout, "FAILED") {
		t.Errorf("export verify of a changed file = %d\n%s", code, stdout)
	}
	m.Count = 3
	mb, _ = json.Marshal(m)
	changedManifest := filepath.Join(dir, "changed.manifest.json")
	os.WriteFile(changedManifest, mb, 0o600)
	if code, stdout, errOut := runCLI(t, env, "export", "verify", "-manifest", changedManifest, "-keys", keysFile, out); code != 1 ||
		!strings.Contains(errOut, "signature") {
		t.Errorf("export verify of a changed manifest = %d\n%s%s", code, stdout, errOut)
	}

	env["TOKENVAULT_API_KEY"] = string(app.Key)
	denied := filepath.Join(dir, "denied.age")
	if code, _, errOut := runCLI(t, env, "export", "-recipient", id.Recipient().String(), "-out", denied); code != 1 || !strings.Contains(errOut, "token:export") {
		t.Errorf("export with a private key = %d %q", code, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 7 {
		t.Errorf("files after a refused export: %d, want only the 7 of before (no partial file)", len(entries))
	}
	if code, _, _ := runCLI(t, env, "export", "-recipient", id.Recipient().String()); code != 2 {
		t.Errorf("export without -out = %d, want 2", code)
	}

	// Held to approval: the change is printed, then run with -approval.
	delete(env, "TOKENVAULT_API_KEY")
	approver, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "ap", Type: tokenvault.Management,
		Permissions: []string{tokenvault.PermTenantRead}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.SetApprovalPolicy(ctx, boot.Application.Key, tokenvault.ApprovalPolicy{Required: 1, Approvers: []string{approver.ID},
		Operations: []string{tokenvault.ApprovalExport}}); err != nil {
		t.Fatal(err)
	}
	held := filepath.Join(dir, "held.age")
	args := []string{"export", "-key-file", keyFile, "-recipient", id.Recipient().String(), "-out", held}
	code, stdout, errOut = runCLI(t, env, args...)
	changes, err := v.ListApprovals(ctx, boot.Application.Key, tokenvault.ListApprovalsRequest{Status: tokenvault.ChangePending})
	if code != 1 || err != nil || len(changes.Data) != 1 || !strings.Contains(stdout, "-approval "+changes.Data[0].ID) {
		t.Fatalf("held export = %d\n%s%s; pending %+v, %v", code, stdout, errOut, changes, err)
	}
	if _, err := os.Stat(held); !os.IsNotExist(err) {
		t.Errorf("a held export wrote %s: %v", held, err)
	}
	if _, err := v.ApproveChange(ctx, approver.Key, changes.Data[0].ID); err != nil {
		t.Fatal(err)
	}
	if code, stdout, errOut := runCLI(t, env, append(args, "-approval", changes.Data[0].ID)...); code != 0 || !strings.Contains(stdout, "exported 3 tokens") {
		t.Fatalf("approved export = %d\n%s%s", code, stdout, errOut)
	}
}
