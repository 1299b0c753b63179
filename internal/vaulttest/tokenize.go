package vaulttest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// Card numbers that pass the Luhn check, of two card brands.
const (
	Visa       = "4242424242424242"
	Mastercard = "5555555555554444"
)

// Reader creates a private application that may do perms on every
// container with the given transform.
func (e *Env) Reader(t testing.TB, transform string, perms ...string) *tokenvault.Application {
	t.Helper()
	a, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: "reader", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: transform, Permissions: perms}},
	})
	if err != nil {
		t.Fatalf("CreateApplication(reader): %v", err)
	}
	return a
}

// RoundTrip re-encodes v as plain JSON values, as an HTTP client sees it.
func RoundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// MustJSON is v encoded as JSON; it panics if v does not encode.
func MustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// WantField fails unless err is Invalid with an error on field.
func WantField(t *testing.T, err error, field string) {
	t.Helper()
	var te *tokenvault.Error
	if !AsError(err, &te) || te.Kind != tokenvault.Invalid {
		t.Fatalf("err = %v, want Invalid on %s", err, field)
	}
	if _, ok := te.Fields[field]; !ok {
		t.Errorf("err fields = %v, want one on %s", te.Fields, field)
	}
}

// AsError sets *target to err when err is a *tokenvault.Error itself
// (not wrapped), and reports whether it was.
func AsError(err error, target **tokenvault.Error) bool {
	te, ok := err.(*tokenvault.Error)
	if ok {
		*target = te
	}
	return ok
}

// Revealer is an application with perms that reads (and, with
// token:create, creates) tokens everywhere with the reveal transform: only
// such a key is shown fingerprints and deduplicates, directly granted
// token:read masking.
func (e *Env) Revealer(t testing.TB, perms ...string) *tokenvault.Application {
	t.Helper()
	var tokenPerms []string
	for _, p := range perms {
		if strings.HasPrefix(p, "token:") && !strings.HasPrefix(p, "token-") {
			tokenPerms = append(tokenPerms, p)
		}
	}
	a, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: "revealer", Type: tokenvault.Private, Permissions: perms,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: tokenPerms}},
	})
	if err != nil {
		t.Fatalf("CreateApplication(revealer %v): %v", perms, err)
	}
	return a
}
