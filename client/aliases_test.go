package client_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/openapitest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// fixedByte is randomness giving one byte forever: every alias drawn from
// it is the same.
type fixedByte byte

func (b fixedByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// TestAliasesThroughTheClient: an alias id with spaces and dashes works in
// every token call of the client (which escapes it in the path), and a
// forced collision is a Conflict.
func TestAliasesThroughTheClient(t *testing.T) {
	ctx := context.Background()
	master := make([]byte, 32)
	rand.Read(master)
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: master},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1}, Rand: fixedByte(4)})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	mux := http.NewServeMux()
	mux.Handle("/vault/", http.StripPrefix("/vault", openapitest.Mount(t, v, httpapi.Options{}, nil)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(srv.URL+"/vault", nil)
	app, err := c.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "b", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal",
			Permissions: []string{"token:create", "token:read", "token:update", "token:delete"}}}})
	if err != nil {
		t.Fatal(err)
	}
	key := app.Key

	tok, err := c.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "token", Data: "4242 4242-4242 4242",
		ID: "{{ data | alias_card: true, true }}"})
	if err != nil {
		t.Fatal(err)
	}
	alias := tok.ID
	if len(alias) != 19 || alias[4] != ' ' || alias[9] != '-' || alias[:9] != "4242 4242" || alias[15:] != "4242" {
		t.Fatalf("alias = %q", alias)
	}
	if got, err := c.GetToken(ctx, key, alias); err != nil || got.Data != "4242 4242-4242 4242" {
		t.Fatalf("GetToken(alias) = %+v, %v", got, err)
	}
	if _, err := c.UpdateToken(ctx, key, alias, json.RawMessage(`{"metadata":{"k":"v"}}`)); err != nil {
		t.Fatalf("UpdateToken(alias) = %v", err)
	}
	out, err := c.Detokenize(ctx, key, map[string]any{"n": "{{ " + alias + " }}"})
	if err != nil || out.(map[string]any)["n"] != "4242 4242-4242 4242" {
		t.Fatalf("Detokenize(alias) = %v, %v", out, err)
	}
	page, err := c.ListTokens(ctx, key, tokenvault.ListTokensRequest{IDs: []string{alias}})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != alias {
		t.Fatalf("ListTokens(alias) = %+v, %v", page, err)
	}
	// The same randomness draws the same alias: a Conflict.
	_, err = c.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "token", Data: "4242 4242-4242 4242",
		ID: "{{ data | alias_card: true, true }}"})
	if tokenvault.ErrorKind(err) != tokenvault.Conflict {
		t.Fatalf("CreateToken(colliding alias) = %v, want Conflict", err)
	}
	if err := c.DeleteToken(ctx, key, alias); err != nil {
		t.Fatalf("DeleteToken(alias) = %v", err)
	}
	if _, err := c.GetToken(ctx, key, alias); tokenvault.ErrorKind(err) != tokenvault.NotFound {
		t.Fatalf("GetToken(deleted alias) = %v, want NotFound", err)
	}
}
