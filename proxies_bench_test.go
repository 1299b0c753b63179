package tokenvault_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/store/memory"
)

// BenchmarkProxyOverhead compares one JSON POST to a loopback destination
// made directly with the same client settings, through InvokeProxy, and
// through InvokeProxy with one detokenization. The difference is the
// proxy's added latency.
func BenchmarkProxyOverhead(b *testing.B) {
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	defer dest.Close()
	e := newEnvOn(b, memory.New())
	p, err := e.v.CreateProxy(ctx, e.mgmt, tokenvault.ProxyRequest{Name: "bench", DestinationURL: dest.URL})
	if err != nil {
		b.Fatal(err)
	}
	user := e.reader(b, "reveal", "token:use", "token:create").Key
	tok, err := e.v.CreateToken(ctx, user, tokenvault.TokenRequest{Type: "token", Data: "Ada"})
	if err != nil {
		b.Fatal(err)
	}
	plain := `{"amount": 42, "currency": "EUR"}`
	withToken := `{"amount": 42, "name": "{{` + tok.ID + `}}"}`

	b.Run("direct", func(b *testing.B) {
		client := &http.Client{}
		b.ReportAllocs()
		for b.Loop() {
			res, err := client.Post(dest.URL, "application/json", strings.NewReader(plain))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	})
	for _, bc := range []struct{ name, body string }{{"proxy", plain}, {"proxy+detokenize", withToken}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.v.InvokeProxy(ctx, jsonCall(p.Key, user, "", bc.body)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
