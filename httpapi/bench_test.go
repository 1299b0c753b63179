package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// BenchmarkTokenizeHandler measures POST /tokenize through the handler
// alone (no network, memory store): compared with the root package's
// BenchmarkTokenizeOne/store=memory, it is what the HTTP translation costs.
func BenchmarkTokenizeHandler(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts httpapi.Options
	}{
		{"plain", httpapi.Options{}},
		{"observed", httpapi.Options{Observe: func(context.Context, httpapi.Observation) {}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			v, mgmt := benchVault(b)
			app, err := v.CreateApplication(context.Background(), mgmt, tokenvault.CreateApplicationRequest{
				Name: "b", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
			if err != nil {
				b.Fatal(err)
			}
			h := httpapi.New(v, bc.opts)
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("POST", "/tokenize", strings.NewReader(`{"ssn": "078-05-1120"}`))
				req.Header.Set("SVC-API-KEY", string(app.Key))
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusCreated {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		})
	}
}
