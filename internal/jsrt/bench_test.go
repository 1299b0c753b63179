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
