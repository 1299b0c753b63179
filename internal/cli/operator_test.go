package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestOperatorKeyCreatedOnFirstRun: the server creates <data>/operator.key
// (0600) once, keeps it across restarts, never logs it, and the key opens
// /operator/ while the management key does not; TOKENVAULT_OPERATOR_KEY and
// -operator-key-file replace it.
func TestOperatorKeyCreatedOnFirstRun(t *testing.T) {
	dir := t.TempDir()
	addr, out, stop := start(t, dir, nil)
	path := filepath.Join(dir, "operator.key")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("operator.key mode %v, want 0600", fi.Mode().Perm())
	}
	key := readFile(t, path)
	if len(key) != 64 {
		t.Errorf("operator.key holds %d characters, want 64 hex digits", len(key))
	}
	if code, body := get(t, "http://"+addr+"/operator/tenants", key); code != 200 {
		t.Errorf("GET /operator/tenants with the operator key = %d %s", code, body)
	}
	mgmt := readFile(t, filepath.Join(dir, "management.key"))
	if code, _ := get(t, "http://"+addr+"/operator/tenants", mgmt); code != 401 {
		t.Errorf("GET /operator/tenants with the management key = %d, want 401", code)
	}
	if code, _ := get(t, "http://"+addr+"/tenants/self", key); code != 401 {
		t.Errorf("GET /tenants/self with the operator key = %d, want 401", code)
	}
	stop()
	if strings.Contains(out.String(), key) {
		t.Error("the operator key is in the server's output")
	}
	if !strings.Contains(out.String(), "operator_key="+path) {
		t.Errorf("the log does not say where the operator key is:\n%s", out)
	}

	addr, _, stop = start(t, dir, nil)
	if readFile(t, path) != key {
		t.Error("a restart changed operator.key")
	}
	if code, _ := get(t, "http://"+addr+"/operator/tenants", key); code != 200 {
		t.Errorf("the operator key after a restart = %d", code)
	}
	stop()

	envKey := "env-operator-key-0123456789"
	addr, _, stop = start(t, dir, map[string]string{"TOKENVAULT_OPERATOR_KEY": envKey})
	if code, _ := get(t, "http://"+addr+"/operator/tenants", envKey); code != 200 {
		t.Errorf("TOKENVAULT_OPERATOR_KEY = %d", code)
	}
	if code, _ := get(t, "http://"+addr+"/operator/tenants", key); code != 401 {
		t.Errorf("operator.key while TOKENVAULT_OPERATOR_KEY is set = %d, want 401", code)
	}
	stop()

	other := filepath.Join(t.TempDir(), "op.key")
	os.WriteFile(other, []byte("file-operator-key-0123456789\n"), 0o600)
	addr, _, stop = startWith(t, dir, nil, "-operator-key-file", other)
	if code, _ := get(t, "http://"+addr+"/operator/tenants", "file-operator-key-0123456789"); code != 200 {
		t.Errorf("-operator-key-file = %d", code)
	}
	stop()

	os.WriteFile(other, []byte("short\n"), 0o600)
	if code, _, errOut := runCLI(t, nil, "-data", dir, "-addr", "127.0.0.1:0", "-operator-key-file", other); code != 1 || !strings.Contains(errOut, "at least 16") || strings.Contains(errOut, "short") {
		t.Errorf("a short operator key = %d %q", code, errOut)
	}
}

// TestTenantCommands creates, lists and deletes a tenant through a running
// server.
func TestTenantCommands(t *testing.T) {
	dir := t.TempDir()
	addr, _, stop := start(t, dir, nil)
	defer stop()
	env := map[string]string{"TOKENVAULT_SERVER": "http://" + addr}
	keyFile := filepath.Join(dir, "operator.key")

	code, out, errOut := runCLI(t, env, "tenant", "create", "-operator-key-file", keyFile, "-owner-email", "ada@example.com", "Globex")
	if code != 0 {
		t.Fatalf("tenant create = %d %s %s", code, out, errOut)
	}
	var boot tokenvault.TenantBootstrap
	if err := json.Unmarshal([]byte(out), &boot); err != nil || boot.Application.Key == "" || boot.Tenant.Name != "Globex" || boot.Owner.User.Email != "ada@example.com" {
		t.Fatalf("tenant create printed %s (%v)", out, err)
	}
	if code, body := get(t, "http://"+addr+"/tenants/self", string(boot.Application.Key)); code != 200 {
		t.Errorf("the new tenant's key = %d %s", code, body)
	}

	// The key from the environment instead of a file.
	env["TOKENVAULT_OPERATOR_KEY"] = readFile(t, keyFile)
	code, out, errOut = runCLI(t, env, "tenant", "list", "-operator-key-file", "/nonexistent")
	if code != 0 || !strings.Contains(out, boot.Tenant.ID) || !strings.Contains(out, "Globex") || !strings.Contains(out, "Default") {
		t.Fatalf("tenant list = %d %q %q", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, env, "tenant", "delete", boot.Tenant.ID); code != 0 || !strings.Contains(out, "deleted") {
		t.Fatalf("tenant delete = %d %q %q", code, out, errOut)
	}
	if code, _ := get(t, "http://"+addr+"/tenants/self", string(boot.Application.Key)); code != 401 {
		t.Errorf("the deleted tenant's key = %d, want 401", code)
	}
	if _, out, _ := runCLI(t, env, "tenant", "list"); strings.Contains(out, boot.Tenant.ID) {
		t.Errorf("tenant list after delete still shows it:\n%s", out)
	}
	if code, _, errOut := runCLI(t, env, "tenant", "delete", boot.Tenant.ID); code != 1 || !strings.Contains(errOut, "not found") {
		t.Errorf("deleting it again = %d %q", code, errOut)
	}

	delete(env, "TOKENVAULT_OPERATOR_KEY")
	if code, _, errOut := runCLI(t, env, "tenant", "list", "-operator-key-file", filepath.Join(dir, "management.key")); code != 1 || !strings.Contains(errOut, "operator key") {
		t.Errorf("tenant list with the management key = %d %q", code, errOut)
	}
	for _, args := range [][]string{{"tenant"}, {"tenant", "frob"}, {"tenant", "create"}, {"tenant", "delete", "a", "b"}, {"backup"}, {"restore"}} {
		if code, _, _ := runCLI(t, env, args...); code != 2 {
			t.Errorf("tokenvault %v = %d, want 2", args, code)
		}
	}
	for _, args := range [][]string{{"tenant", "-h"}, {"tenant", "create", "-h"}, {"backup", "-h"}, {"restore", "-h"}} {
		code, out, _ := runCLI(t, env, args...)
		if code != 0 || !strings.Contains(out, "Usage: tokenvault") {
			t.Errorf("tokenvault %v = %d %q", args, code, out)
		}
	}
	if _, out, _ := runCLI(t, nil, "backup", "-h"); !strings.Contains(out, "TOKENVAULT_SERVER") || !strings.Contains(out, "TOKENVAULT_OPERATOR_KEY") {
		t.Errorf("backup -h does not list its environment:\n%s", out)
	}
}

// TestBackupRestoreRoundTrip backs a running server up while tokens are
// being created over HTTP, restores the backup into a new data directory,
// serves it, and reads back every token acknowledged before the backup
// began.
func TestBackupRestoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	addr, _, stop := start(t, dir, nil)
	ctx := context.Background()
	c := client.New("http://"+addr, nil)
	mgmt := readFile(t, filepath.Join(dir, "management.key"))
	app, err := c.CreateApplication(ctx, tokenvault.Credential(mgmt), tokenvault.CreateApplicationRequest{Name: "rw", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:create", "token:read"}}}})
	if err != nil {
		t.Fatal(err)
	}

	type acked struct{ id, value string }
	var (
		mu      sync.Mutex
		more    = sync.NewCond(&mu)
		tokens  []acked
		failed  error
		stopped bool
		wg      sync.WaitGroup
	)
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				mu.Lock()
				done := stopped
				mu.Unlock()
				if done {
					return
				}
				value := fmt.Sprintf("v-%d-%d", w, i)
				tok, err := c.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: value})
				mu.Lock()
				if err != nil {
					failed = err
				} else {
					tokens = append(tokens, acked{tok.ID, value})
				}
				more.Broadcast()
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	waitFor := func(n int) []acked {
		mu.Lock()
		defer mu.Unlock()
		for len(tokens) < n && failed == nil {
			more.Wait()
		}
		return append([]acked(nil), tokens...)
	}
	before := waitFor(100)
	file := filepath.Join(t.TempDir(), "backup.db")
	env := map[string]string{"TOKENVAULT_SERVER": "http://" + addr}
	code, out, errOut := runCLI(t, env, "backup", "-operator-key-file", filepath.Join(dir, "operator.key"), "-o", file)
	waitFor(len(before) + 20) // the load went on through the backup
	mu.Lock()
	stopped = true
	mu.Unlock()
	wg.Wait()
	if failed != nil {
		t.Fatalf("a token failed during the backup: %v", failed)
	}
	if code != 0 || !strings.Contains(out, "wrote a backup") {
		t.Fatalf("backup = %d %q %q", code, out, errOut)
	}
	stop()

	restored := filepath.Join(t.TempDir(), "restored")
	code, out, errOut = runCLI(t, nil, "restore", "-i", file, "-data", restored, "-master-key-file", filepath.Join(dir, "master.key"))
	if code != 0 || !strings.Contains(out, "restored") {
		t.Fatalf("restore = %d %q %q", code, out, errOut)
	}
	if readFile(t, filepath.Join(restored, "master.key")) != readFile(t, filepath.Join(dir, "master.key")) {
		t.Error("restore did not copy the master key")
	}
	addr, _, stop = start(t, restored, nil)
	defer stop()
	c = client.New("http://"+addr, nil)
	for _, a := range before {
		tok, err := c.GetToken(ctx, app.Key, a.id)
		if err != nil || tok.Data != a.value {
			t.Fatalf("token %s after restore = %+v, %v; want data %q", a.id, tok, err, a.value)
		}
	}

	// restore never overwrites, and needs the right master key.
	if code, _, errOut := runCLI(t, nil, "restore", "-i", file, "-data", restored, "-master-key-file", filepath.Join(dir, "master.key")); code != 1 || !strings.Contains(errOut, "vault.db") {
		t.Errorf("restore into a used data directory = %d %q", code, errOut)
	}
	wrong := filepath.Join(t.TempDir(), "wrong.key")
	os.WriteFile(wrong, []byte(strings.Repeat("ab", 32)+"\n"), 0o600)
	empty := filepath.Join(t.TempDir(), "empty")
	if code, _, errOut := runCLI(t, nil, "restore", "-i", file, "-data", empty, "-master-key-file", wrong); code != 1 || !strings.Contains(errOut, "master key does not open") {
		t.Errorf("restore with another master key = %d %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(empty, "vault.db")); err == nil {
		t.Error("a failed restore left vault.db")
	}
	if code, _, errOut := runCLI(t, map[string]string{"TOKENVAULT_MASTER_KEY": readFile(t, filepath.Join(dir, "master.key"))}, "restore", "-i", file, "-data", filepath.Join(t.TempDir(), "env")); code != 0 {
		t.Errorf("restore with TOKENVAULT_MASTER_KEY = %d %q", code, errOut)
	}
	notDB := filepath.Join(t.TempDir(), "not.db")
	os.WriteFile(notDB, []byte("hello"), 0o600)
	if code, _, errOut := runCLI(t, nil, "restore", "-i", notDB, "-data", filepath.Join(t.TempDir(), "x"), "-master-key-file", wrong); code != 1 || !strings.Contains(errOut, "not a bbolt database") {
		t.Errorf("restore of a file that is no database = %d %q", code, errOut)
	}
}

// TestFailedBackupLeavesNoFile: a backup the server refuses, or that
// breaks off, leaves neither FILE nor a temporary file.
func TestFailedBackupLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	addr, _, stop := start(t, dir, nil)
	defer stop()
	outDir := t.TempDir()
	file := filepath.Join(outDir, "backup.db")
	env := map[string]string{"TOKENVAULT_SERVER": "http://" + addr, "TOKENVAULT_OPERATOR_KEY": "not-the-operator-key-at-all"}
	if code, _, errOut := runCLI(t, env, "backup", "-o", file); code != 1 || !strings.Contains(errOut, "no backup written") {
		t.Errorf("backup with a wrong key = %d %q", code, errOut)
	}

	// A server that answers 200 and breaks off mid-file.
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(200)
		w.Write(make([]byte, 4096))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	defer broken.Close()
	env = map[string]string{"TOKENVAULT_SERVER": broken.URL, "TOKENVAULT_OPERATOR_KEY": "whatever-operator-key-0123"}
	if code, _, errOut := runCLI(t, env, "backup", "-o", file); code != 1 {
		t.Errorf("a backup broken off = %d %q", code, errOut)
	}
	// A whole answer that is no database.
	junk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("junk")) }))
	defer junk.Close()
	env["TOKENVAULT_SERVER"] = junk.URL
	if code, _, errOut := runCLI(t, env, "backup", "-o", file); code != 1 || !strings.Contains(errOut, "not a bbolt database") {
		t.Errorf("a backup that is no database = %d %q", code, errOut)
	}
	entries, _ := os.ReadDir(outDir)
	for _, e := range entries {
		t.Errorf("a failed backup left %s", e.Name())
	}
}
