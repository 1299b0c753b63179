package vaulttest

import (
	"testing"

	"github.com/tokenvault/tokenvault"
)

// IntentCard is a card a browser would send: Visa, with a cvc.
func IntentCard() map[string]any {
	return map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2035, "cvc": "123"}
}

// IntentEnv is a Vault with a public application (the browser's) and a
// private one (the backend's, which converts and reads tokens).
type IntentEnv struct {
	*Env
	Pub, Priv *tokenvault.Application
}

// NewIntentEnv is WithIntentApps on a new Vault on a memory store.
func NewIntentEnv(t *testing.T) *IntentEnv {
	return WithIntentApps(t, NewEnv(t))
}

// WithIntentApps adds to e a public application with token:create and a
// private one reading (revealed) and creating tokens in every container.
func WithIntentApps(t *testing.T, e *Env) *IntentEnv {
	t.Helper()
	priv, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "backend", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: tokenvault.TransformReveal,
			Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}}}})
	if err != nil {
		t.Fatal(err)
	}
	return &IntentEnv{Env: e, Pub: e.App(t, tokenvault.Public, tokenvault.PermTokenCreate), Priv: priv}
}
