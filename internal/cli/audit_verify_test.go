package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
)

// TestAuditVerifyRefusesNonCanonicalCopies: audit verify -file refuses a
// copy of the fixture export with a line re-encoded so that one JSON
// reader sees the original (which hashes right) and another a forgery,
// exit 1 naming the line; and with -first 0, a copy with every line of
// the tenant removed (its checkpoints kept) does not verify.
func TestAuditVerifyRefusesNonCanonicalCopies(t *testing.T) {
	b, err := os.ReadFile(fixtureExport)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i, forged := range [][2]string{
		{`"message":"Token updated"`, `"message":"FORGED","MESSAGE":"Token updated"`},
		{`"actor_id":"0193f1d2-0000-7000-8000-0000000000a1"`, `"actor_id":"someone-else","actor_id":"0193f1d2-0000-7000-8000-0000000000a1"`},
		{`"message":"Token updated"`, `"message":"Token updated","comment":"FORGED"`},
		{`"message":"Token updated"`, `"message":"Tok\u0065n updated"`},
	} {
		tampered := bytes.Replace(b, []byte(forged[0]), []byte(forged[1]), 1)
		line := bytes.Count(tampered[:bytes.Index(tampered, []byte(forged[1]))], []byte("\n")) + 1
		path := filepath.Join(dir, "forged.jsonl")
		if err := os.WriteFile(path, tampered, 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCLI(t, nil, "audit", "verify", "-file", path, "-keys", fixtureKeys, "-tenant", fixtureTenantA)
		if code != 1 || !strings.Contains(errOut, "export line "+itoa(line)+": not in canonical form") || strings.Contains(out, "OK") {
			t.Errorf("forgery %d: audit verify = %d\n%s%s", i, code, out, errOut)
		}
	}

	// Every line of tenant A removed, its checkpoints kept.
	var kept []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if strings.Contains(l, `"schema":"tokenvault.audit/v1"`) && strings.Contains(l, `"tenant_id":"`+fixtureTenantA+`"`) {
			continue
		}
		kept = append(kept, l)
	}
	path := filepath.Join(dir, "emptied.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(kept, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, first := range []string{"0", "1"} {
		code, out, errOut := runCLI(t, nil, "audit", "verify", "-file", path, "-keys", fixtureKeys, "-tenant", fixtureTenantA, "-first", first)
		if code != 1 || !strings.Contains(out, "lines: none") || !strings.Contains(out, "missing at seq") || !strings.Contains(errOut, "does not verify") {
			t.Errorf("audit verify -first %s of a copy without lines = %d\n%s%s", first, code, out, errOut)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestAuditVerifyDeletedTenantAfterRotation: against a running server,
// a tenant whose chain was signed, then the signing key rotated (audit
// rotate-key) and the tenant deleted (tenant delete), leaves an export
// file that audit verify -file verifies to its final checkpoint, signed
// with the new key.
func TestAuditVerifyDeletedTenantAfterRotation(t *testing.T) {
	dir := t.TempDir()
	auditFile := filepath.Join(dir, "audit.jsonl")
	addr, _, stop := startWith(t, dir, nil, "-audit-file", auditFile, "-audit-checkpoint-every", "0", "-audit-checkpoint-interval", "0")
	defer stop()
	env := map[string]string{"TOKENVAULT_SERVER": "http://" + addr, "TOKENVAULT_OPERATOR_KEY_FILE": filepath.Join(dir, "operator.key")}
	ctx := context.Background()
	c := client.New("http://"+addr, nil)

	code, out, errOut := runCLI(t, env, "tenant", "create", "Doomed")
	if code != 0 {
		t.Fatalf("tenant create = %d %s %s", code, out, errOut)
	}
	var boot tokenvault.TenantBootstrap
	if err := json.Unmarshal([]byte(out), &boot); err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	app, err := c.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "w", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"}); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, env, "audit", "verify", "-sign", "-tenant", tid); code != 0 {
		t.Fatalf("audit verify -sign = %d\n%s%s", code, out, errOut)
	}
	keysPath := filepath.Join(dir, "keys.json")
	writeKeys := func() {
		t.Helper()
		code, keysJSON, errOut := runCLI(t, map[string]string{"TOKENVAULT_SERVER": "http://" + addr}, "audit", "keys")
		if code != 0 {
			t.Fatalf("audit keys = %d %s", code, errOut)
		}
		if err := os.WriteFile(keysPath, []byte(keysJSON), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	verified := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			code, out, errOut := runCLI(t, nil, "audit", "verify", "-file", auditFile, "-keys", keysPath, "-tenant", tid)
			if code == 0 && strings.Contains(out, want) {
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("the server's export file does not verify with %q after 30 s: %d\n%s%s", want, code, out, errOut)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	writeKeys()
	verified("OK") // every line out, signed with the first key

	code, out, errOut = runCLI(t, env, "audit", "rotate-key")
	var rotated struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &rotated); code != 0 || err != nil {
		t.Fatalf("audit rotate-key = %d %v\n%s%s", code, err, out, errOut)
	}
	if code, out, errOut := runCLI(t, env, "tenant", "delete", tid); code != 0 {
		t.Fatalf("tenant delete = %d\n%s%s", code, out, errOut)
	}
	writeKeys()
	verified("final (the tenant was deleted)")
	// Its final checkpoint is the new key's.
	final := 0
	for _, l := range strings.Split(readFile(t, auditFile), "\n") {
		var ev tokenvault.AuditEvent
		if json.Unmarshal([]byte(l), &ev) == nil && ev.Checkpoint != nil && ev.TenantID == tid && ev.Checkpoint.Final {
			final++
			if ev.Checkpoint.KeyID != rotated.ID {
				t.Errorf("the final checkpoint is signed with %s, not the new key %s", ev.Checkpoint.KeyID, rotated.ID)
			}
		}
	}
	if final == 0 {
		t.Error("no final checkpoint in the export file")
	}
}
