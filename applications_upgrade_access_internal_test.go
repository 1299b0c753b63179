package tokenvault

import (
	"context"
	"slices"
	"testing"
)

// A store that had the webhook upgrade but not token:access:read (the
// second upgrade): Open gives the new permission to the full managers,
// and TokenAccess answers for them; before, it was PermissionDenied.
func TestManagementUpgradeGrantsTokenAccessRead(t *testing.T) {
	ctx := context.Background()
	open := upgradeStore(t)
	v := open()
	boot, err := v.CreateTenant(ctx, CreateTenantRequest{Name: "Old", Owner: User{Email: "owner@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	tid, mgmt := boot.Tenant.ID, boot.Application.Key
	priv, err := v.CreateApplication(ctx, mgmt, CreateApplicationRequest{Name: "p", Type: Private, Permissions: []string{PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := v.CreateToken(ctx, priv.Key, TokenRequest{Type: TypeToken, Data: "x"})
	if err != nil {
		t.Fatal(err)
	}
	// The store as the release with webhooks left it.
	withoutPermissions(t, v, tid, []string{PermTokenAccessRead}, 1)
	if _, err := v.TokenAccess(ctx, mgmt, tok.ID); ErrorKind(err) != PermissionDenied {
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
	if !slices.Contains(got.Permissions, PermTokenAccessRead) {
		t.Errorf("the manager was not given %s: %v", PermTokenAccessRead, got.Permissions)
	}
}
