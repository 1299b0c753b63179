package tokenvault_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"

	"filippo.io/age"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/store/memory"
)

// A tenant's tokens leave encrypted to the receiving system's age key,
// with a manifest signed by the vault's audit key, which the receiver
// checks with the vault's published keys and its own identity.
func ExampleVault_ExportTokens() {
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
	backend, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "Backend", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate},
	})
	if err != nil {
		panic(err)
	}
	for _, email := range []string{"ada@example.com", "alan@example.com"} {
		if _, err := v.CreateToken(ctx, backend.Key, tokenvault.TokenRequest{Type: tokenvault.TypeToken, Data: email}); err != nil {
			panic(err)
		}
	}

	// The receiving system's key pair (age-keygen); the vault gets the
	// public key only.
	receiver, err := age.GenerateX25519Identity()
	if err != nil {
		panic(err)
	}
	var file bytes.Buffer
	manifest, err := v.ExportTokens(ctx, boot.Application.Key, tokenvault.ExportRequest{Recipient: receiver.Recipient().String()}, &file)
	if err != nil {
		panic(err)
	}
	fmt.Println("exported:", manifest.Count, "tokens; in clear in the file:", bytes.Contains(file.Bytes(), []byte("ada@")))

	// Where it arrives: the vault's public keys (GET /audit/keys) and the
	// receiver's identity.
	keys, err := v.AuditKeys(ctx)
	if err != nil {
		panic(err)
	}
	checked, err := tokenvault.VerifyExport(manifest, keys, &file, receiver)
	fmt.Println("verified:", checked.Signature, checked.Ciphertext, checked.Plaintext, checked.Count, err)
	// Output:
	// exported: 2 tokens; in clear in the file: false
	// verified: true true true 2 <nil>
}
