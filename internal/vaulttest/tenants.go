package vaulttest

import (
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/store/memory"
)

// NewMailEnv is NewEnv with a fake Mailer and an acceptance page URL.
func NewMailEnv(t *testing.T) (*Env, *testfake.Mailer) {
	t.Helper()
	m := &testfake.Mailer{}
	e := NewEnvOn(t, memory.New(), func(o *tokenvault.Options) {
		o.Mailer = m
		o.InvitationURL = "https://app.example.com/join?from=mail"
	})
	return e, m
}

// Invite invites email with the bootstrap management key.
func (e *Env) Invite(t *testing.T, email string) *tokenvault.Invitation {
	t.Helper()
	inv, err := e.V.CreateInvitation(ctx, e.Mgmt, tokenvault.CreateInvitationRequest{Email: email})
	if err != nil {
		t.Fatalf("CreateInvitation(%s): %v", email, err)
	}
	return inv
}

// MgmtWith creates a management application holding only perms.
func (e *Env) MgmtWith(t *testing.T, perms ...string) tokenvault.Credential {
	t.Helper()
	return e.App(t, tokenvault.Management, perms...).Key
}

// Member adds an ADMIN member through an invitation.
func (e *Env) Member(t *testing.T, m *testfake.Mailer, email string) *tokenvault.TenantMember {
	t.Helper()
	e.Invite(t, email)
	mem, err := e.V.AcceptInvitation(ctx, m.Last(t).Token, tokenvault.User{})
	if err != nil {
		t.Fatalf("AcceptInvitation: %v", err)
	}
	return mem
}
