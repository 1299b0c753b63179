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

// BenchmarkTokenizeAliasID measures POST /tokenize of one card through the
// handler (memory store) with a generated id beside alias ids: what
// drawing an alias, checking it before the transaction and its display
// rule (the alias and the mask evaluated once per hidden digit), and
// looking it up cost. The card alias keeps the last four only, so its 12
// random digits never run out however long the benchmark runs.
func BenchmarkTokenizeAliasID(b *testing.B) {
	card := `"data": {"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031}`
	for _, bc := range []struct{ name, body string }{
		{"uuid", `{"type": "card", ` + card + `}`},
		{"alias_card", `{"type": "card", "id": "{{ data.number | alias_card: false, true }}", ` + card + `}`},
		{"alias_preserve_format", `{"type": "token", "id": "{{ data | alias_preserve_format: 0, 4 }}", "mask": "{{ data | reveal_last: 4 }}", "data": "078-05-1120-3344-5566"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			v, mgmt := benchVault(b)
			app, err := v.CreateApplication(context.Background(), mgmt, tokenvault.CreateApplicationRequest{
				Name: "b", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
			if err != nil {
				b.Fatal(err)
			}
			h := httpapi.New(v, httpapi.Options{})
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("POST", "/tokenize", strings.NewReader(bc.body))
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
