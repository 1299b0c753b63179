package kms_test

import (
	"context"
	"crypto/rand"
	"fmt"

	wrapping "github.com/hashicorp/go-kms-wrapping/v2"
	"github.com/hashicorp/go-kms-wrapping/v2/aead"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/keywrap/kms"
	"github.com/tokenvault/tokenvault/store/memory"
)

// A Vault whose keys are wrapped by a go-kms-wrapping wrapper. The AEAD
// wrapper stands in for a cloud one (awskms, gcpckms, azurekeyvault,
// transit), which is configured the same way with its own settings.
func ExampleNew() {
	ctx := context.Background()
	key := make([]byte, 32)
	rand.Read(key)
	w := aead.NewWrapper()
	if _, err := w.SetConfig(ctx, wrapping.WithKeyId("example-key"), aead.WithKey(key), aead.WithAeadType(wrapping.AeadTypeAesGcm)); err != nil {
		panic(err)
	}
	kw, err := kms.New(ctx, w)
	if err != nil {
		panic(err)
	}
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{Wrapper: kw}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		panic(err)
	}
	defer v.Close()
	if _, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"}); err != nil {
		panic(err)
	}
	counts, err := v.WrappedKeys(ctx)
	if err != nil {
		panic(err)
	}
	for _, c := range counts {
		fmt.Printf("%d keyrings wrapped by %s key %s\n", c.Count, c.Kind, c.KeyID)
	}
	// Output: 2 keyrings wrapped by kms-aead key example-key
}
