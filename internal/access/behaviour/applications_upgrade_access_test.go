package access_test

import (
	"slices"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// A store that had the webhook upgrade but not token:access:read (the
// second upgrade): Open gives the new permission to the full managers,
// and TokenAccess answers for them; before, it was PermissionDenied.
func TestManagementUpgradeGrantsTokenAccessRead(t *testing.T) {
	open := upgradeStore(t)
	v := open()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Old", Owner: tokenvault.User{Email: "owner@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	tid, mgmt := boot.Tenant.ID, boot.Application.Key
	priv, err := v.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "p", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := v.CreateToken(ctx, priv.Key, tokenvault.TokenRequest{Type: tokenvault.TypeToken, Data: "x"})
	if err != nil {
		t.Fatal(err)
	}
	// The store as the release with webhooks left it.
	withoutPermissions(t, v, tid, []string{tokenvault.PermTokenAccessRead}, 1)
	if _, err := v.TokenAccess(ctx, mgmt, tok.ID); tokenvault.ErrorKind(err) != tokenvault.PermissionDenied {
		t.Fatalf("before the upgrade: TokenAccess = %v, want PermissionDenied", err)
	}
	v.Close()

	v = open()
	defer v.Close()
	if _, err := v.TokenAccess(ctx, mgmt, tok.ID); err != nil {
		t.Fatalf("after the upgrade: TokenAccess = %v", err)
	}
	got, err := v.GetApplication(ctx, mgmt, boot.Application.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got.Permissions, tokenvault.PermTokenAccessRead) {
		t.Errorf("the manager was not given %s: %v", tokenvault.PermTokenAccessRead, got.Permissions)
	}
}
