package tokenvault_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// Run with: go test -run XXX -bench 'Tokenize|GetToken' -benchmem .
// Stores are opened as the tests open them (bbolt with NoSync), so the
// figures measure the Vault, not the disk; BENCHMARKS.md says so.

func forEachStoreB(b *testing.B, fn func(b *testing.B, e *env)) {
	for _, sk := range storeKinds {
		b.Run("store="+sk.name, func(b *testing.B) { fn(b, newEnvOn(b, sk.open(b))) })
	}
}

func BenchmarkTokenizeOne(b *testing.B) {
	forEachStoreB(b, func(b *testing.B, e *env) {
		creator := e.app(b, tokenvault.Private, "token:create")
		req := tokenvault.TokenRequest{Type: "token", Data: "123-45-6789"}
		for b.Loop() {
			if _, err := e.v.CreateToken(ctx, creator.Key, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkTokenizeCard(b *testing.B) {
	forEachStoreB(b, func(b *testing.B, e *env) {
		creator := e.app(b, tokenvault.Private, "token:create")
		req := cardRequest(visa)
		for b.Loop() {
			if _, err := e.v.CreateToken(ctx, creator.Key, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTokenizeCardBody tokenizes a card sent as a JSON body, as POST
// /tokenize does.
func BenchmarkTokenizeCardBody(b *testing.B) {
	forEachStoreB(b, func(b *testing.B, e *env) {
		creator := e.app(b, tokenvault.Private, "token:create")
		body := json.RawMessage(`{"type":"card","data":{"number":"4242424242424242","expiration_month":12,"expiration_year":2031,"cvc":"123"}}`)
		for b.Loop() {
			if _, err := e.v.Tokenize(ctx, creator.Key, body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkGetToken(b *testing.B) {
	forEachStoreB(b, func(b *testing.B, e *env) {
		tok := e.token(b, tokenvault.TokenRequest{Type: "token", Data: "123-45-6789"})
		reader := e.reader(b, "reveal", "token:read")
		for b.Loop() {
			if _, err := e.v.GetToken(ctx, reader.Key, tok.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTokenizeBatch1000 tokenizes an array of 1,000 plain values in one
// request (one transaction).
func BenchmarkTokenizeBatch1000(b *testing.B) {
	forEachStoreB(b, func(b *testing.B, e *env) {
		creator := e.app(b, tokenvault.Private, "token:create")
		body := make([]any, 1000)
		for i := range body {
			body[i] = fmt.Sprintf("value-%d", i)
		}
		for b.Loop() {
			if _, err := e.v.Tokenize(ctx, creator.Key, body); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "tokens/s")
	})
}
