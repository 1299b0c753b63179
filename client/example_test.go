package client_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
)

// The same calls, in-process on a Vault and remote through the client: the
// types are the same, only the receiver changes.
func Example() {
	ctx := context.Background()
	masterKey := make([]byte, 32)
	rand.Read(masterKey)
	v, _ := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: masterKey}})
	defer v.Close()
	boot, _ := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})

	// Mounted on your own mux, under any prefix.
	mux := http.NewServeMux()
	mux.Handle("/vault/", http.StripPrefix("/vault", httpapi.New(v, httpapi.Options{})))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// Remote, with the Vault's types.
	c := client.New(srv.URL+"/vault", nil)
	app, err := c.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "Backend", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: tokenvault.TransformReveal,
			Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}}},
	})
	if err != nil {
		panic(err)
	}
	tok, _ := c.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "078-05-1120"})

	// In-process, the same token through the same key.
	local, _ := v.GetToken(ctx, app.Key, tok.ID)
	remote, _ := c.GetToken(ctx, app.Key, tok.ID)
	fmt.Println(local.Data, remote.Data)

	_, err = c.GetToken(ctx, app.Key, "no-such-token")
	fmt.Println(tokenvault.ErrorKind(err))
	// Output:
	// 078-05-1120 078-05-1120
	// not found
}
