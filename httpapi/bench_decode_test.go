package httpapi_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
)

// The benchmarks of this file count what decoding costs a request through
// the handler (no network, memory store): a card to tokenize, and reactor
// invocations whose code echoes its arguments or calls
// req.client.tokenize once (run in worker processes: only this process's
// allocations are counted). Run with:
//
//	go test -run '^$' -bench 'CardHandler|InvokeReactorHandler' -benchmem ./httpapi

const benchCard = `{"type":"card","data":{"number":"4242424242424242","expiration_month":12,"expiration_year":2031,"cvc":"123"}}`

// benchVault opens a Vault on a memory store with one tenant, and returns
// it with the tenant's management key.
func benchVault(b *testing.B) (*tokenvault.Vault, tokenvault.Credential) {
	key := make([]byte, 32)
	rand.Read(key)
	v, err := tokenvault.Open(context.Background(), tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { v.Close() })
	boot, err := v.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{Name: "A"})
	if err != nil {
		b.Fatal(err)
	}
	return v, boot.Application.Key
}

// benchApp creates a private application that may do perms everywhere,
// revealing.
func benchApp(b *testing.B, v *tokenvault.Vault, mgmt tokenvault.Credential, perms ...string) *tokenvault.Application {
	app, err := v.CreateApplication(context.Background(), mgmt, tokenvault.CreateApplicationRequest{
		Name: "b", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: perms}},
	})
	if err != nil {
		b.Fatal(err)
	}
	return app
}

// benchPost serves one POST of body to h and fails b unless it answers
// want.
func benchPost(b *testing.B, h http.Handler, path string, key tokenvault.Credential, body string, want int) {
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("SVC-API-KEY", string(key))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != want {
		b.Fatalf("%d %s", w.Code, w.Body)
	}
}

// BenchmarkTokenizeCardHandler is POST /tokenize of one card.
func BenchmarkTokenizeCardHandler(b *testing.B) {
	v, mgmt := benchVault(b)
	app := benchApp(b, v, mgmt, tokenvault.PermTokenCreate)
	h := httpapi.New(v, httpapi.Options{})
	b.ReportAllocs()
	for b.Loop() {
		benchPost(b, h, "/tokenize", app.Key, benchCard, http.StatusCreated)
	}
}

// BenchmarkInvokeReactorHandler is POST /reactors/{id}/react of a reactor
// that echoes its arguments, and of one that tokenizes a card through
// req.client once.
func BenchmarkInvokeReactorHandler(b *testing.B) {
	for _, c := range []struct{ name, code string }{
		{"echo", `module.exports = async function (req) { return {raw: req.args} }`},
		{"client-tokenize", `module.exports = async function (req) { return {raw: req.client.tokenize(req.args.card)} }`},
	} {
		b.Run(c.name, func(b *testing.B) {
			v, mgmt := benchVault(b)
			app := benchApp(b, v, mgmt, tokenvault.PermTokenCreate)
			r, err := v.CreateReactor(context.Background(), mgmt, tokenvault.CreateReactorRequest{Name: "r", Code: c.code,
				Application: &tokenvault.Ref{ID: app.ID}})
			if err != nil {
				b.Fatal(err)
			}
			caller := benchApp(b, v, mgmt, tokenvault.PermTokenUse)
			h := httpapi.New(v, httpapi.Options{})
			body := `{"args":{"amount":42,"currency":"EUR","card":` + benchCard + `}}`
			benchPost(b, h, "/reactors/"+r.ID+"/react", caller.Key, body, http.StatusOK)
			b.ReportAllocs()
			for b.Loop() {
				benchPost(b, h, "/reactors/"+r.ID+"/react", caller.Key, body, http.StatusOK)
			}
		})
	}
}
