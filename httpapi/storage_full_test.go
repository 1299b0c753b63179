package httpapi_test

import (
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// TestStorageFullOverHTTP: a write refused for a full disk is 507 in
// problem+json saying storage is full, not 500 "internal error", with a
// Retry-After header saying when to try again; once
// space is freed the same request succeeds.
func TestStorageFullOverHTTP(t *testing.T) {
	fs := storetest.NewFaultStore(memory.New())
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Store = fs })
	_, key := s.app(t, map[string]any{"name": "c", "type": "private", "permissions": []string{"token:create", "token:read"}})
	fs.FailWith(syscall.ENOSPC)
	fs.FailAfter(0)
	r := s.do(t, "POST", "/tokens", key, map[string]any{"type": "token", "data": "x"})
	wantStatus(t, "POST /tokens on a full disk", r, http.StatusInsufficientStorage)
	if p := r.problem(t); !strings.Contains(p.Detail, "storage is full") {
		t.Errorf("problem detail = %q, want it to say storage is full", p.Detail)
	}
	if got := r.header.Get("Retry-After"); got != "60" {
		t.Errorf("POST /tokens on a full disk: Retry-After = %q, want \"60\" (seconds)", got)
	}
	fs.FailAfter(-1)
	r = s.do(t, "POST", "/tokens", key, map[string]any{"type": "token", "data": "x"})
	wantStatus(t, "POST /tokens once space is freed", r, http.StatusCreated)
}
