package vaulttest

import (
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/testfake"
)

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
