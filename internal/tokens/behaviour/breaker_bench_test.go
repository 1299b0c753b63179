package tokens_test

import (
	"fmt"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// BenchmarkGetTokenRevealBudget is BenchmarkGetToken over 256 tokens in
// turn, by a reader without a reveal budget (none), with one it never
// crosses (within: each token is counted once, then reread), and with one
// of a single token (past: every other read is masked). What a budget
// costs a read is the difference with none: the count is kept in memory
// (access.RevealCounter), so a read writes nothing more.
//
// Run with: go test -run XXX -bench GetTokenRevealBudget -benchmem ./internal/tokens/behaviour
func BenchmarkGetTokenRevealBudget(b *testing.B) {
	for _, tc := range []struct {
		name   string
		budget *tokenvault.RevealBudget
	}{
		{"none", nil},
		{"within", &tokenvault.RevealBudget{Tokens: 1_000_000, Window: "744h"}},
		{"past", &tokenvault.RevealBudget{Tokens: 1, Window: "744h"}},
	} {
		b.Run("budget="+tc.name, func(b *testing.B) {
			vaulttest.ForEachStoreB(b, func(b *testing.B, e *vaulttest.Env) {
				creator := e.Reader(b, "reveal", "token:create")
				ids := make([]string, 256)
				for i := range ids {
					tok, err := e.V.CreateToken(ctx, creator.Key, tokenvault.TokenRequest{Type: "token", Data: fmt.Sprintf("value-%d", i)})
					if err != nil {
						b.Fatal(err)
					}
					ids[i] = tok.ID
				}
				reader, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
					Name: "reader", Type: tokenvault.Private, RevealBudget: tc.budget,
					Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:read"}}},
				})
				if err != nil {
					b.Fatal(err)
				}
				i := 0
				for b.Loop() {
					if _, err := e.V.GetToken(ctx, reader.Key, ids[i%len(ids)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		})
	}
}
