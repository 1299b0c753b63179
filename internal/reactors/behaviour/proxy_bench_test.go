package reactors_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
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
	e := vaulttest.NewEnvOn(b, memory.New())
	p, err := e.V.CreateProxy(ctx, e.Mgmt, tokenvault.ProxyRequest{Name: "bench", DestinationURL: dest.URL})
	if err != nil {
		b.Fatal(err)
	}
	user := e.Reader(b, "reveal", "token:use", "token:create").Key
	tok, err := e.V.CreateToken(ctx, user, tokenvault.TokenRequest{Type: "token", Data: "Ada"})
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
	// The same proxy with a request transform, which runs in a sandbox
	// worker: the difference to "proxy" is the transform's overhead.
	pt, err := e.V.CreateProxy(ctx, e.Mgmt, tokenvault.ProxyRequest{Name: "bench+transform", DestinationURL: dest.URL,
		RequestTransform: &tokenvault.ProxyTransform{Code: `module.exports = async (req) => ({body: req.args.body, headers: req.args.headers})`}})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, key, body string }{
		{"proxy", p.Key, plain}, {"proxy+detokenize", p.Key, withToken}, {"proxy+transform", pt.Key, plain},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var d []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				if _, err := e.V.InvokeProxy(ctx, vaulttest.JSONCall(bc.key, user, "", bc.body)); err != nil {
					b.Fatal(err)
				}
				d = append(d, time.Since(start))
			}
			slices.Sort(d)
			b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
		})
	}
}
