package vaulttest_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// TestDamagedStoreFileIsAnError: a bbolt file damaged under a running
// Vault (every page past the two meta pages overwritten) fails the calls
// that read it as Internal (wrapping bolt.ErrDamaged) in process and 500
// over HTTP, with no panic: the process keeps running. Opened again, the
// file is refused with a *bolt.DamagedError naming it.
func TestDamagedStoreFileIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vault.db")
	key := vaulttest.NewMasterKey()
	v, err := tokenvault.Open(ctx, tokenvault.Options{Path: path, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "a", Type: tokenvault.Private, Permissions: []string{"token:create", "token:read"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 300 {
		tok, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: map[string]any{"i": i, "pad": strings.Repeat("p", 300)}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tok.ID)
	}

	// bbolt maps the file shared: the running Vault sees the damage.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	page := int64(os.Getpagesize()) // bbolt's page size for a new file
	junk := make([]byte, fi.Size()-2*page)
	for i := range junk {
		junk[i] = byte(i*131 + 7)
	}
	if _, err := f.WriteAt(junk, 2*page); err != nil {
		t.Fatal(err)
	}
	f.Close()

	_, err = v.GetToken(ctx, app.Key, ids[0])
	vaulttest.WantKind(t, "GetToken from a damaged file", err, tokenvault.Internal)
	if !errors.Is(err, bolt.ErrDamaged) {
		t.Errorf("GetToken from a damaged file = %v, want it to wrap bolt.ErrDamaged", err)
	}
	h := httpapi.New(v, httpapi.Options{})
	r := httptest.NewRequest("GET", "/tokens/"+ids[1], nil)
	r.Header.Set(httpapi.APIKeyHeader, string(app.Key))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusInternalServerError || w.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("GET /tokens/{id} from a damaged file = %d %s, want a 500 problem", w.Code, w.Body)
	}
	_, err = v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "after"})
	if err == nil {
		t.Error("CreateToken into a damaged file succeeded")
	}
	v.Close()

	_, err = tokenvault.Open(ctx, tokenvault.Options{Path: path, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	var d *bolt.DamagedError
	if !errors.As(err, &d) || d.Path != path {
		t.Errorf("Open of the damaged file = %v, want a *bolt.DamagedError naming %s", err, path)
	}
}
