package access_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestDeniedNamesTheContainer: a call refused on a token's container
// says which container and permission it lacks, and where the key's rules
// grant that permission, so that an operator sees which rule is missing:
// a read, a create and an update, and a key that holds the permission nowhere.
func TestDeniedNamesTheContainer(t *testing.T) {
	e := vaulttest.NewEnv(t)
	writer := e.Revealer(t, tokenvault.PermTokenCreate)
	tok, err := e.V.CreateToken(ctx, writer.Key, tokenvault.TokenRequest{Type: "token", Data: "x", Containers: []string{"/general/"}})
	if err != nil {
		t.Fatal(err)
	}
	pci, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "pci", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/pci/", Transform: "reveal",
			Permissions: []string{tokenvault.PermTokenRead, tokenvault.PermTokenCreate, tokenvault.PermTokenUpdate}}}})
	if err != nil {
		t.Fatal(err)
	}
	none := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate)
	for _, c := range []struct {
		what string
		err  error
		want string
	}{
		{"GetToken", get(e, pci.Key, tok.ID), "the key lacks the permission token:read on /general/; it holds token:read on /pci/ only"},
		{"CreateToken", create(e, pci.Key, "/general/"), "the key lacks the permission token:create on /general/; it holds token:create on /pci/ only"},
		{"UpdateToken", update(e, pci.Key, tok.ID), "the key lacks the permission token:update on /general/; it holds token:update on /pci/ only"},
		// A key that holds token:read nowhere is refused before any token.
		{"GetToken without token:read", get(e, none.Key, tok.ID), "the key lacks the permission token:read"},
	} {
		var te *tokenvault.Error
		if !errors.As(c.err, &te) || te.Kind != tokenvault.PermissionDenied || te.Message != c.want {
			t.Errorf("%s = %v, want PermissionDenied %q", c.what, c.err, c.want)
		}
	}
}

func get(e *vaulttest.Env, key tokenvault.Credential, id string) error {
	_, err := e.V.GetToken(ctx, key, id)
	return err
}

func create(e *vaulttest.Env, key tokenvault.Credential, container string) error {
	_, err := e.V.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "token", Data: "y", Containers: []string{container}})
	return err
}

func update(e *vaulttest.Env, key tokenvault.Credential, id string) error {
	_, err := e.V.UpdateToken(ctx, key, id, json.RawMessage(`{"metadata": {"a": "b"}}`))
	return err
}
