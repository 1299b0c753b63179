package vaulttest

import (
	"testing"

	"github.com/tokenvault/tokenvault"
)

// MaskingAttacker is a key that reads cards in /pci/ only masked, but
// reveals, creates and searches in /sandbox/: it may tokenize guesses
// where it reads in clear and compare them with the card it only sees
// masked.
func (e *Env) MaskingAttacker(t *testing.T, transform string) *tokenvault.Application {
	t.Helper()
	a, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: "masking reader", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{
			{Priority: 1, Container: "/sandbox/", Transform: "reveal",
				Permissions: []string{"token:create", "token:read", "token:search"}},
			{Priority: 2, Container: "/pci/", Transform: transform,
				Permissions: []string{"token:create", "token:read", "token:search"}},
		},
	})
	if err != nil {
		t.Fatalf("CreateApplication(masking reader): %v", err)
	}
	return a
}
