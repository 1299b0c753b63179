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
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/client"
)

const (
	fixtureExport  = "../../testdata/auditchain/export.jsonl"
	fixtureKeys    = "../../testdata/auditchain/keys.json"
	fixtureTenantA = "0193f1d2-0000-7000-8000-00000000000a"
	fixtureTenantB = "0193f1d2-0000-7000-8000-00000000000b"
)

// TestAuditVerifyOfflineFixture: audit verify -file verifies the fixture
// chain (testdata/auditchain) with its keys, exit 0; a tampered copy
// exits 1 naming the problem and its seq, in text and in JSON; bad
// command lines exit 2, unreadable files 1.
func TestAuditVerifyOfflineFixture(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "audit", "verify", "-file", fixtureExport, "-keys", fixtureKeys, "-tenant", fixtureTenantA)
	if code != 0 || !strings.Contains(out, "tenant "+fixtureTenantA+": OK") || !strings.Contains(out, "seq 1 to 8") ||
		!strings.Contains(out, "signed through seq 8") {
		t.Errorf("audit verify of the fixture = %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, nil, "audit", "verify", "-file", fixtureExport, "-keys", fixtureKeys, "-tenant", fixtureTenantB, "-json")
	var r auditchain.Report
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || !r.OK || !r.Final || r.LastSeq != 3 {
		t.Errorf("audit verify -json of tenant B = %d %v\n%s", code, err, out)
	}

	// Line 4 of tenant A altered in a copy.
	b, err := os.ReadFile(fixtureExport)
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Replace(b, []byte(`"message":"Token read"`), []byte(`"message":"Token viewed"`), 1)
	if bytes.Equal(tampered, b) {
		t.Fatal("the fixture has no line to alter")
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, nil, "audit", "verify", "-file", path, "-keys", fixtureKeys, "-tenant", fixtureTenantA)
	if code != 1 || !strings.Contains(out, "1 problem") || !strings.Contains(out, "altered at seq 4") ||
		!strings.Contains(errOut, "does not verify") {
		t.Errorf("audit verify of an altered copy = %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, nil, "audit", "verify", "-file", path, "-keys", fixtureKeys, "-tenant", fixtureTenantA, "-json")
	r = auditchain.Report{}
	if err := json.Unmarshal([]byte(out), &r); code != 1 || err != nil || r.OK || len(r.Problems) != 1 ||
		r.Problems[0].Kind != auditchain.Altered || r.Problems[0].Seq != 4 {
		t.Errorf("audit verify -json of an altered copy = %d %v\n%s", code, err, out)
	}

	// Not an export: exit 1, the line named.
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, nil, "audit", "verify", "-file", bad, "-keys", fixtureKeys, "-tenant", fixtureTenantA); code != 1 ||
		!strings.Contains(errOut, "export line 1") {
		t.Errorf("audit verify of a file that is not an export = %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, nil, "audit", "verify", "-file", fixtureExport, "-keys", fixtureKeys, "-tenant", "0193f1d2-0000-7000-8000-0000000000ff"); code != 1 ||
		!strings.Contains(errOut, "no chained line and no checkpoint of the tenant") {
		t.Errorf("audit verify of a tenant not in the file = %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, nil, "audit", "verify", "-file", fixtureExport, "-keys", fixtureExport, "-tenant", fixtureTenantA); code != 1 ||
		!strings.Contains(errOut, "GET /audit/keys") {
		t.Errorf("audit verify with an export as the keys = %d %q", code, errOut)
	}
	for _, args := range [][]string{
		{"audit"}, {"audit", "frob"}, {"audit", "verify"}, {"audit", "verify", "-file", fixtureExport, "-tenant", fixtureTenantA},
		{"audit", "verify", "-keys", fixtureKeys, "-tenant", fixtureTenantA}, {"audit", "keys", "extra"},
	} {
		if code, _, _ := runCLI(t, nil, args...); code != 2 {
			t.Errorf("tokenvault %v = %d, want 2", args, code)
		}
	}
	for _, args := range [][]string{{"audit", "-h"}, {"audit", "verify", "-h"}} {
		if code, out, _ := runCLI(t, nil, args...); code != 0 || !strings.Contains(out, "Usage: tokenvault audit") {
			t.Errorf("tokenvault %v = %d %q", args, code, out)
		}
	}
}

// TestAuditCommandsOnline: against a running server with an audit file
// sink, audit keys prints the published keys, audit verify -tenant
// verifies from the store (the operator key), and the server's export
// file, with those keys, verifies offline with audit verify -file once
// the chain is checkpointed; audit rotate-key adds a key, and the export
// still verifies with the keys printed after it.
func TestAuditCommandsOnline(t *testing.T) {
	dir := t.TempDir()
	auditFile := filepath.Join(dir, "audit.jsonl")
	// Checkpoints only when asked, so that the tail is unsigned until then.
	addr, _, stop := startWith(t, dir, nil, "-audit-file", auditFile, "-audit-checkpoint-every", "0", "-audit-checkpoint-interval", "0")
	defer stop()
	env := map[string]string{"TOKENVAULT_SERVER": "http://" + addr, "TOKENVAULT_OPERATOR_KEY_FILE": filepath.Join(dir, "operator.key")}
	ctx := context.Background()
	c := client.New("http://"+addr, nil)
	opKey := tokenvault.Credential(readFile(t, filepath.Join(dir, "operator.key")))

	code, out, errOut := runCLI(t, env, "tenant", "create", "Globex")
	if code != 0 {
		t.Fatalf("tenant create = %d %s %s", code, out, errOut)
	}
	var boot tokenvault.TenantBootstrap
	if err := json.Unmarshal([]byte(out), &boot); err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	app, err := c.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "rw", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		tok, err := c.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: i})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetToken(ctx, app.Key, tok.ID); err != nil { // a read: its transform and channel are chained too
			t.Fatal(err)
		}
	}

	// Online, from the store: every line is there, and none is signed
	// yet, which is a problem (exit 1) until a checkpoint covers them.
	code, out, errOut = runCLI(t, env, "audit", "verify", "-tenant", tid)
	if code != 1 || !strings.Contains(out, "tenant "+tid+": 1 problem") || !strings.Contains(out, "unsigned_tail at seq 1-") ||
		!strings.Contains(errOut, "does not verify") {
		t.Errorf("audit verify -tenant (online) of an unsigned chain = %d\n%s%s", code, out, errOut)
	}
	// -sign has the server sign the head first: then it verifies whole.
	code, out, errOut = runCLI(t, env, "audit", "verify", "-sign", "-tenant", tid)
	if code != 0 || !strings.Contains(out, "tenant "+tid+": ") || strings.Contains(out, "unsigned_tail") {
		t.Errorf("audit verify -sign -tenant = %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, env, "audit", "verify", "-sign", "-file", "x", "-keys", "y", "-tenant", tid); code != 2 || !strings.Contains(errOut, "-sign goes without -file") {
		t.Errorf("audit verify -sign -file = %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, env, "audit", "verify", "-tenant", "0193f1d2-0000-7000-8000-0000000000ff"); code != 1 || !strings.Contains(errOut, "not found") {
		t.Errorf("audit verify of an unknown tenant = %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, map[string]string{"TOKENVAULT_SERVER": "http://" + addr, "TOKENVAULT_OPERATOR_KEY": "not-the-operator-key-0123456789"},
		"audit", "verify", "-tenant", tid); code != 1 || !strings.Contains(errOut, "operator key") {
		t.Errorf("audit verify with a wrong operator key = %d %q", code, errOut)
	}

	code, out, errOut = runCLI(t, env, "audit", "rotate-key")
	var rotated auditchain.PublicKey
	if err := json.Unmarshal([]byte(out), &rotated); code != 0 || err != nil || rotated.ID == "" || rotated.RetiredAt != nil {
		t.Fatalf("audit rotate-key = %d %v\n%s%s", code, err, out, errOut)
	}
	if code, _, errOut := runCLI(t, map[string]string{"TOKENVAULT_SERVER": "http://" + addr, "TOKENVAULT_OPERATOR_KEY_FILE": filepath.Join(dir, "management.key")},
		"audit", "rotate-key"); code != 1 || !strings.Contains(errOut, "operator key") {
		t.Errorf("audit rotate-key with the management key = %d %q", code, errOut)
	}
	// Signed after the rotation, with the new key: the chain ends signed.
	cp, err := c.SignAuditChain(ctx, opKey, tid)
	if err != nil || cp.KeyID != rotated.ID {
		t.Fatalf("SignAuditChain = %+v, %v; want it signed with the new key %s", cp, err, rotated.ID)
	}
	code, keysJSON, errOut := runCLI(t, map[string]string{"TOKENVAULT_SERVER": "http://" + addr}, "audit", "keys") // no key needed
	var keys auditKeysFile
	if err := json.Unmarshal([]byte(keysJSON), &keys); code != 0 || err != nil || len(keys.Keys) < 2 {
		t.Fatalf("audit keys = %d %v\n%s%s", code, err, keysJSON, errOut)
	}
	keysPath := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(keysPath, []byte(keysJSON), 0o600); err != nil {
		t.Fatal(err)
	}

	// The server's chain, from the store: nothing is written to it from
	// here on.
	var offline, online auditchain.Report
	code, out, errOut = runCLI(t, env, "audit", "verify", "-tenant", tid, "-json")
	if err := json.Unmarshal([]byte(out), &online); code != 0 || err != nil || !online.OK || online.Lines < 15 {
		t.Fatalf("online report %d %+v (%v %s)", code, online, err, errOut)
	}
	// The export reaches the file within a few passes of the exporter: a
	// file that holds a prefix of the chain verifies too, so the file is
	// read until it holds the whole chain the server has.
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, out, errOut = runCLI(t, nil, "audit", "verify", "-file", auditFile, "-keys", keysPath, "-tenant", tid, "-json")
		offline = auditchain.Report{}
		err := json.Unmarshal([]byte(out), &offline)
		if code == 0 && err == nil && offline.LastSeq == online.LastSeq {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's export file does not verify through seq %d after 30 s: %d %+v\n%s%s", online.LastSeq, code, offline, out, errOut)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !offline.OK || offline.Head != online.Head || offline.SignedThrough != online.SignedThrough {
		t.Errorf("the export's chain is not the server's: online %+v, offline %+v", online, offline)
	}
	_, out, _ = runCLI(t, nil, "audit", "verify", "-file", auditFile, "-keys", keysPath, "-tenant", tid)
	if !strings.Contains(out, "tenant "+tid+": OK") || !strings.Contains(out, "signed through seq") {
		t.Errorf("audit verify -file of the server's export:\n%s", out)
	}
}
