//go:build unix

package vaulttest_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestStorageFullWhenTheFileCannotGrow: a Vault on a bbolt file that may
// not grow any more (the process's file size limit, RLIMIT_FSIZE) refuses
// writes as StorageFull with a RetryAfter, and over HTTP as 507 with
// Retry-After, instead of an internal error (bbolt's own error for the
// failed growth keeps no cause); every token acknowledged before reads
// back. The limit binds every file a process writes, so the Vault runs in
// a child process (this test binary again) that sets it first.
func TestStorageFullWhenTheFileCannotGrow(t *testing.T) {
	dir := os.Getenv("TOKENVAULT_FSIZE_CHILD")
	if dir == "" {
		t.Parallel()
		cmd := exec.Command(os.Args[0], "-test.run=^TestStorageFullWhenTheFileCannotGrow$", "-test.v")
		cmd.Env = append(os.Environ(), "TOKENVAULT_FSIZE_CHILD="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Errorf("the child with an 8 MiB file size limit: %v\n%s", err, out)
		} else {
			t.Logf("the child:\n%s", out)
		}
		return
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 8 << 20, Max: 8 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := tokenvault.Open(ctx, tokenvault.Options{Path: filepath.Join(dir, "vault.db"), Keys: tokenvault.KeyOptions{MasterKey: vaulttest.NewMasterKey()}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "a", Type: tokenvault.Private, Permissions: []string{"token:create", "token:read"}})
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("p", 32<<10)
	var acknowledged []string
	var refused error
	for i := 0; i < 10000; i++ {
		tok, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: map[string]any{"i": i, "pad": pad}})
		if err != nil {
			refused = err
			break
		}
		acknowledged = append(acknowledged, tok.ID)
	}
	vaulttest.WantKind(t, "CreateToken once the file cannot grow", refused, tokenvault.StorageFull)
	var te *tokenvault.Error
	if errors.As(refused, &te) && te.RetryAfter <= 0 {
		t.Errorf("CreateToken once the file cannot grow: RetryAfter = %v, want when to try again", te.RetryAfter)
	}
	t.Logf("%d tokens acknowledged, then %v", len(acknowledged), refused)

	h := httpapi.New(v, httpapi.Options{})
	r := httptest.NewRequest("POST", "/tokens", strings.NewReader(`{"type": "token", "data": {"pad": "`+pad+`"}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(httpapi.APIKeyHeader, string(app.Key))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusInsufficientStorage || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "storage is full") {
		t.Errorf("POST /tokens once the file cannot grow = %d (Retry-After %q) %s, want 507 with Retry-After saying storage is full", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	for _, id := range acknowledged {
		if _, err := v.GetToken(ctx, app.Key, id); err != nil {
			t.Fatalf("GetToken(%s), acknowledged before the file filled = %v", id, err)
		}
	}
}
