package cli

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// TestReadinessFailsWhileStorageIsFull: with every write failing as a full
// disk (ENOSPC), a write over HTTP is 507 in problem+json and /readyz is
// 503; once space is freed /readyz is 200 again and writes succeed, with
// no restart.
func TestReadinessFailsWhileStorageIsFull(t *testing.T) {
	fs := storetest.NewFaultStore(memory.New())
	masterKey := make([]byte, 32)
	rand.Read(masterKey)
	v, err := tokenvault.Open(context.Background(), tokenvault.Options{
		Store:     fs,
		Logger:    slog.New(slog.DiscardHandler),
		Keys:      tokenvault.KeyOptions{MasterKey: masterKey},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	boot, err := v.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{Name: "full"})
	if err != nil {
		t.Fatal(err)
	}
	key := boot.Application.Key
	h := newHandler(v, slog.New(slog.DiscardHandler), slog.New(slog.DiscardHandler), nil, false, "", "")
	post := func() (int, string, string) {
		w := serveBody(h, "POST", "/applications", string(key), `{"name": "a", "type": "private", "permissions": ["token:read"]}`)
		return w.Code, w.Header().Get("Content-Type"), w.Body.String()
	}

	wantCode(t, serve(h, "GET", "/readyz", ""), 200)
	fs.FailWith(syscall.ENOSPC)
	fs.FailAfter(0)
	if code, ct, body := post(); code != 507 || ct != "application/problem+json" || !strings.Contains(body, "storage is full") {
		t.Errorf("POST /applications on a full disk = %d %s %s, want 507 problem+json saying storage is full", code, ct, body)
	}
	wantCode(t, serve(h, "GET", "/readyz", ""), 503)
	wantCode(t, serve(h, "GET", "/readyz", ""), 503)
	wantCode(t, serve(h, "GET", "/healthz", ""), 200) // alive: no restart wanted

	fs.FailAfter(-1)
	wantCode(t, serve(h, "GET", "/readyz", ""), 200)
	if code, _, body := post(); code != 201 {
		t.Errorf("POST /applications once space is freed = %d %s, want 201", code, body)
	}
}

// serveBody is serve with a JSON body.
func serveBody(h http.Handler, method, target, key, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(httpapi.APIKeyHeader, key)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}
