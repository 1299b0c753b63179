package httpapi_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/jsoncheck"
	"github.com/tokenvault/tokenvault/store/memory"
)

// Each JSON text that comes in is walked once (jsoncheck: strings,
// duplicate keys and depth together), then decoded once: httpapi hands the
// Vault what it checked and decoded, and the Vault does not walk it again.
// A reactor's req.client.tokenize body is the only other text: the
// worker's, walked once by the Vault. (The values tokenized are plain
// strings, whose stored JSON is read back without a walk: a card's stored
// mask is decoded again to present it, which the counts would include.)
// Not parallel: jsoncheck.CountWalks counts every walk of the process, and
// the parallel tests of the package walk bodies of their own.
func TestEachBodyIsWalkedOnce(t *testing.T) {
	key := make([]byte, 32)
	rand.Read(key)
	v, err := tokenvault.Open(context.Background(), tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	ctx := context.Background()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	mgmt := boot.Application.Key
	app, err := v.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "b", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:create", "token:use"}}}})
	if err != nil {
		t.Fatal(err)
	}
	echo, err := v.CreateReactor(ctx, mgmt, tokenvault.CreateReactorRequest{Name: "echo",
		Code: `module.exports = async function (req) { return {raw: req.args} }`})
	if err != nil {
		t.Fatal(err)
	}
	client, err := v.CreateReactor(ctx, mgmt, tokenvault.CreateReactorRequest{Name: "client", Application: &tokenvault.Ref{ID: app.ID},
		Code: `module.exports = async function (req) { return {raw: req.client.tokenize(req.args.person)} }`})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(v, httpapi.Options{})
	card := `{"type":"card","data":{"number":"4242424242424242","expiration_month":12,"expiration_year":2031,"cvc":"123"}}`
	for _, tc := range []struct {
		name, path, body string
		status           int
		walks            int64
	}{
		{"tokenize", "/tokenize", `{"ssn": "078-05-1120", "names": ["Ada", "Grace"]}`, http.StatusCreated, 1},
		{"tokenize refused", "/tokenize", `{"a": "\ud800"}`, http.StatusBadRequest, 1},
		{"tokenize too deep", "/tokenize", strings.Repeat("[", 70) + strings.Repeat("]", 70), http.StatusBadRequest, 1},
		{"invoke", "/reactors/" + echo.ID + "/react", `{"args": {"amount": 42, "card": ` + card + `}}`, http.StatusOK, 1},
		{"invoke, req.client.tokenize", "/reactors/" + client.ID + "/react", `{"args": {"person": {"ssn": "078-05-1120"}}}`, http.StatusOK, 2},
	} {
		var n atomic.Int64
		stop := jsoncheck.CountWalks(&n)
		req := httptest.NewRequest("POST", tc.path, strings.NewReader(tc.body))
		req.Header.Set("SVC-API-KEY", string(app.Key))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		stop()
		if w.Code != tc.status {
			t.Fatalf("%s: %d %s", tc.name, w.Code, w.Body)
		}
		if got := n.Load(); got != tc.walks {
			t.Errorf("%s: %d walks of JSON text, want %d", tc.name, got, tc.walks)
		}
	}
}
