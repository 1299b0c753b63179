package cli

import (
	"context"
	"crypto/rand"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestTokenAccessCommand prints a token's accesses, and a data subject's,
// through a running server with a management key; a private key is
// refused, and a missing key or argument is said so.
func TestTokenAccessCommand(t *testing.T) {
	ctx := context.Background()
	master := make([]byte, 32)
	rand.Read(master)
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: master},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	srv := httptest.NewServer(httpapi.New(v, httpapi.Options{}))
	defer srv.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "be", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "Ada", Metadata: map[string]string{"customer": "42"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.GetToken(ctx, app.Key, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Detokenize(ctx, app.Key, map[string]any{"n": "{{" + tok.ID + "}}"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TOKENVAULT_SERVER": srv.URL, "TOKENVAULT_API_KEY": string(boot.Application.Key)}
	for _, args := range [][]string{{"token-access", tok.ID}, {"token-access", "-metadata", "customer=42"}} {
		code, out, errOut := runCLI(t, env, args...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(lines) != 3 || !strings.Contains(lines[1], "detokenize") || !strings.Contains(lines[2], " get ") ||
			!strings.Contains(lines[1], "application "+app.ID) || !strings.Contains(lines[2], tok.ID) {
			t.Errorf("%v = %d\n%s%s", args, code, out, errOut)
		}
	}
	env["TOKENVAULT_API_KEY"] = string(app.Key)
	if code, _, errOut := runCLI(t, env, "token-access", tok.ID); code != 1 || !strings.Contains(errOut, "token:access:read") {
		t.Errorf("with a private key = %d %q", code, errOut)
	}
	delete(env, "TOKENVAULT_API_KEY")
	if code, _, errOut := runCLI(t, env, "token-access", tok.ID); code != 1 || !strings.Contains(errOut, "TOKENVAULT_API_KEY") {
		t.Errorf("without a key = %d %q", code, errOut)
	}
	if code, _, _ := runCLI(t, env, "token-access"); code != 2 {
		t.Errorf("without a token id = %d, want 2", code)
	}
}
