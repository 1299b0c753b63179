package client_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/openapitest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestWithPurposeIsSent: the client sends the purpose of access of the
// call's context (tokenvault.WithPurpose) as SVC-PURPOSE, so a rule that
// requires it reveals through the client as in process, and a call
// without one gets the same Invalid error naming purpose.
func TestWithPurposeIsSent(t *testing.T) {
	ctx := context.Background()
	key := make([]byte, 32)
	rand.Read(key)
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: key},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/vault/", http.StripPrefix("/vault", openapitest.Mount(t, v, httpapi.Options{}, nil)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := client.New(srv.URL+"/vault", nil)

	mgmt := boot.Application.Key
	if _, err := c.SetPurposes(ctx, mgmt, tokenvault.SetPurposesRequest{Purposes: []tokenvault.Purpose{
		{Name: "fraud-review", Description: "Reviewing a payment flagged as fraud"}}}); err != nil {
		t.Fatal(err)
	}
	app, err := c.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "reviewer", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenCreate},
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal",
			Permissions: []string{tokenvault.PermTokenRead}, Purposes: []string{"fraud-review"}}}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetToken(ctx, app.Key, tok.ID)
	var e *tokenvault.Error
	if !errors.As(err, &e) || e.Kind != tokenvault.Invalid || e.Fields["purpose"] == nil {
		t.Errorf("GetToken without a purpose = %v, want Invalid naming purpose", err)
	}
	got, err := c.GetToken(tokenvault.WithPurpose(ctx, "fraud-review"), app.Key, tok.ID)
	if err != nil || got.Data != "secret" {
		t.Fatalf("GetToken for fraud-review = %+v, %v; want the data", got, err)
	}
	access, err := c.TokenAccess(ctx, mgmt, tok.ID)
	if err != nil || len(access.Data) == 0 || access.Data[0].Purpose != "fraud-review" {
		t.Errorf("TokenAccess = %+v, %v; want the read for fraud-review", access, err)
	}
}
