package jsrt

import (
	"context"
	"testing"
)

// BenchmarkRunTrivial is one invocation of a warm, cached program.
func BenchmarkRunTrivial(b *testing.B) {
	r := New(Options{})
	code := `module.exports = async function(req){ return {raw: req.args} }`
	if _, err := r.Compile(code); err != nil {
		b.Fatal(err)
	}
	req := map[string]any{"args": map[string]any{"card": "4242424242424242", "n": 1.0}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p, err := r.Compile(code) // a cache hit, as the host does per call
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Run(ctx, p, req, Host{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunTrivialParallel is BenchmarkRunTrivial from GOMAXPROCS
// goroutines.
func BenchmarkRunTrivialParallel(b *testing.B) {
	r := New(Options{})
	p, err := r.Compile(`module.exports = async function(req){ return {raw: req.args} }`)
	if err != nil {
		b.Fatal(err)
	}
	req := map[string]any{"args": map[string]any{"card": "4242424242424242", "n": 1.0}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := r.Run(context.Background(), p, req, Host{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkRunUsing is BenchmarkRunTrivial with code that uses one of the
// lazily created globals: what creating it costs an invocation that needs
// it.
func BenchmarkRunUsing(b *testing.B) {
	for _, bc := range []struct{ name, expr string }{
		{"Buffer", `Buffer.from(req.args.card).toString('base64')`},
		{"URL", `new URL('https://a.example/p?q=' + req.args.n).searchParams.get('q')`},
		{"TextEncoder", `new TextDecoder().decode(new TextEncoder().encode(req.args.card))`},
		{"console", `console.log('%s', req.args.card)`},
		{"fetch", `await (await fetch('https://api.example/x', {method: 'POST', body: {card: req.args.card}})).json()`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := New(Options{})
			p, err := r.Compile(`module.exports = async function(req){ return {raw: ` + bc.expr + `} }`)
			if err != nil {
				b.Fatal(err)
			}
			req := map[string]any{"args": map[string]any{"card": "4242424242424242", "n": 1.0}}
			host := Host{Fetch: &fakeFetcher{resp: &FetchResponse{Status: 200, Body: []byte(`{"id":"tok_1"}`)}}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Run(context.Background(), p, req, host); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
