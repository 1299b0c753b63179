package vaulttest

import (
	"testing"

	"github.com/tokenvault/tokenvault"
)

// Session creates a session with a new public application of e's tenant.
func (e *Env) Session(t *testing.T) *tokenvault.Session {
	t.Helper()
	pub := e.App(t, tokenvault.Public, tokenvault.PermTokenCreate)
	s, err := e.V.CreateSession(ctx, pub.Key)
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return s
}

// Authorizer creates a private application that may do anything to every
// token and see it revealed, so it can grant sessions anything.
func (e *Env) Authorizer(t *testing.T) *tokenvault.Application {
	t.Helper()
	return e.Reader(t, "reveal", "token:create", "token:read", "token:update", "token:delete", "token:search", "token:use")
}

// Authorized creates a session and authorizes it with req (Nonce filled in).
func (e *Env) Authorized(t *testing.T, req tokenvault.AuthorizeSessionRequest) *tokenvault.Session {
	t.Helper()
	s := e.Session(t)
	req.Nonce = s.Nonce
	if err := e.V.AuthorizeSession(ctx, e.Authorizer(t).Key, req); err != nil {
		t.Fatalf("AuthorizeSession: %v", err)
	}
	return s
}
