package tokens_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// Run with: go test -run XXX -bench 'Tokenize|GetToken' -benchmem .
// Stores are opened as the tests open them (bbolt with NoSync), so the
// figures measure the Vault, not the disk; BENCHMARKS.md says so.

func BenchmarkTokenizeOne(b *testing.B) {
	vaulttest.ForEachStoreB(b, func(b *testing.B, e *vaulttest.Env) {
		creator := e.App(b, tokenvault.Private, "token:create")
		req := tokenvault.TokenRequest{Type: "token", Data: "123-45-6789"}
		for b.Loop() {
			if _, err := e.V.CreateToken(ctx, creator.Key, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkTokenizeCard(b *testing.B) {
	vaulttest.ForEachStoreB(b, func(b *testing.B, e *vaulttest.Env) {
		creator := e.App(b, tokenvault.Private, "token:create")
		req := vaulttest.CardRequest(vaulttest.Visa)
		for b.Loop() {
			if _, err := e.V.CreateToken(ctx, creator.Key, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTokenizeCardBody tokenizes a card sent as a JSON body, as POST
// /tokenize does.
func BenchmarkTokenizeCardBody(b *testing.B) {
	vaulttest.ForEachStoreB(b, func(b *testing.B, e *vaulttest.Env) {
		creator := e.App(b, tokenvault.Private, "token:create")
		body := json.RawMessage(`{"type":"card","data":{"number":"4242424242424242","expiration_month":12,"expiration_year":2031,"cvc":"123"}}`)
		for b.Loop() {
			if _, err := e.V.Tokenize(ctx, creator.Key, body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkGetToken(b *testing.B) {
	vaulttest.ForEachStoreB(b, func(b *testing.B, e *vaulttest.Env) {
		tok := e.Token(b, tokenvault.TokenRequest{Type: "token", Data: "123-45-6789"})
		reader := e.Reader(b, "reveal", "token:read")
		for b.Loop() {
			if _, err := e.V.GetToken(ctx, reader.Key, tok.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTokenizeBatch1000 tokenizes an array of 1,000 plain values in one
// request (one transaction).
func BenchmarkTokenizeBatch1000(b *testing.B) {
	vaulttest.ForEachStoreB(b, func(b *testing.B, e *vaulttest.Env) {
		creator := e.App(b, tokenvault.Private, "token:create")
		body := make([]any, 1000)
		for i := range body {
			body[i] = fmt.Sprintf("value-%d", i)
		}
		for b.Loop() {
			if _, err := e.V.Tokenize(ctx, creator.Key, body); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "tokens/s")
	})
}
