package tokens_test

import (
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestDeduplicationStaysInItsContainers: a deduplicating create returns an
// existing token only when type, fingerprint, fingerprint expression and
// containers all match, and logs that read; otherwise it creates a token,
// so it can neither return a token of a container the caller did not name
// nor test a guessed value against another token's fingerprint.
func TestDeduplicationStaysInItsContainers(t *testing.T) {
	e := vaulttest.NewEnv(t)
	owner := e.Reader(t, "reveal", "token:create", "token:read")
	secret, err := e.V.CreateToken(ctx, owner.Key, tokenvault.TokenRequest{Type: "card",
		Data: map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031}})
	if err != nil {
		t.Fatal(err)
	}
	// A public key that may create only in /public/.
	public, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "web", Type: tokenvault.Public,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/public/", Transform: "redact", Permissions: []string{"token:create"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, req := range map[string]tokenvault.TokenRequest{
		"same card, another container": {Type: "card", DeduplicateToken: true, Containers: []string{"/public/"},
			Data: map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031}},
		"another card, a literal fingerprint expression": {Type: "card", DeduplicateToken: true, Containers: []string{"/public/"},
			FingerprintExpression: vaulttest.Visa, Data: map[string]any{"number": vaulttest.Mastercard, "expiration_month": 12, "expiration_year": 2031}},
	} {
		got, err := e.V.CreateToken(ctx, public.Key, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.ID == secret.ID {
			t.Errorf("%s: returned the /pci/high/ token %s", name, secret.ID)
		}
	}

	again, err := e.V.CreateToken(ctx, owner.Key, tokenvault.TokenRequest{Type: "card", DeduplicateToken: true,
		Data: map[string]any{"number": vaulttest.Visa, "expiration_month": 1, "expiration_year": 2032}})
	if err != nil || again.ID != secret.ID {
		t.Fatalf("same card, same container: %+v, %v; want the existing token", again, err)
	}
	logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: "card", EntityID: secret.ID})
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, l := range logs.Data {
		ops = append(ops, l.Operation)
	}
	if len(ops) != 2 || ops[0] != tokenvault.OpRead || ops[1] != tokenvault.OpCreate {
		t.Errorf("log of the deduplicated token: %v, want read then create (newest first)", ops)
	}
}
