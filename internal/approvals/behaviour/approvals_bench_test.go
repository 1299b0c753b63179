package approvals_test

import (
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// BenchmarkDetokenizePolicy is what the approval policy costs a
// detokenization of one token that it does not hold (one more record
// read): without a policy, and with one holding bulk detokenizations.
func BenchmarkDetokenizePolicy(b *testing.B) {
	for _, held := range []bool{false, true} {
		name := "policy=none"
		if held {
			name = "policy=bulk"
		}
		b.Run(name, func(b *testing.B) {
			e := vaulttest.NewEnv(b)
			reader := e.Revealer(b, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
			tok, err := e.V.CreateToken(ctx, reader.Key, vaulttest.CardRequest("4242424242424242"))
			if err != nil {
				b.Fatal(err)
			}
			if held {
				ap := e.App(b, tokenvault.Management, tokenvault.PermTenantRead)
				if _, err := e.V.SetApprovalPolicy(ctx, e.Mgmt, tokenvault.ApprovalPolicy{Required: 1, Approvers: []string{ap.ID},
					Operations: []string{tokenvault.ApprovalDetokenizeBulk}, DetokenizeOver: 10, TTLSeconds: 3600}); err != nil {
					b.Fatal(err)
				}
			}
			body := map[string]any{"n": "{{ " + tok.ID + " }}"}
			for b.Loop() {
				if _, err := e.V.Detokenize(ctx, reader.Key, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
