package tokenvault_test

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/store/memory"
)

// A host program opens a Vault, bootstraps a tenant and hands out keys.
func Example() {
	ctx := context.Background()
	masterKey := make([]byte, 32)
	rand.Read(masterKey)
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: masterKey}})
	if err != nil {
		panic(err)
	}
	defer v.Close()

	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		panic(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name:        "Browser checkout",
		Type:        tokenvault.Public,
		Permissions: []string{tokenvault.PermTokenCreate},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(app.Name, app.Type, app.Permissions)

	// A public key may never read tokens: the Vault refuses to grant it.
	_, err = v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "Leaky", Type: tokenvault.Public, Permissions: []string{tokenvault.PermTokenRead},
	})
	fmt.Println(err)
	// Output:
	// Browser checkout public [token:create]
	// tokenvault: the request is invalid; permissions[0]: a public application may not hold "token:read"
}

// A value of the program's own type is tokenized whole, and read back as
// that type.
func ExampleTokenizeAs() {
	ctx := context.Background()
	masterKey := make([]byte, 32)
	rand.Read(masterKey)
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: masterKey}})
	if err != nil {
		panic(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		panic(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "backend", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: tokenvault.TransformReveal,
			Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}}},
	})
	if err != nil {
		panic(err)
	}

	type Patient struct {
		Name string `json:"name"`
		SSN  string `json:"ssn"`
	}
	tok, err := tokenvault.TokenizeAs(ctx, v, app.Key, Patient{Name: "Ada", SSN: "078-05-1120"})
	if err != nil {
		panic(err)
	}
	p, err := tokenvault.DetokenizeAs[Patient](ctx, v, app.Key, tok.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Name, p.SSN)

	card, err := v.TokenizeCard(ctx, app.Key, tokenvault.Card{Number: "4242424242424242", ExpirationMonth: 12, ExpirationYear: 2999})
	if err != nil {
		panic(err)
	}
	fmt.Println(card.Type, card.Data.(map[string]any)["number"])
	// Output:
	// Ada 078-05-1120
	// card XXXXXXXXXXXX4242
}
