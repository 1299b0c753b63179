package tokenvault

import (
	"context"
	"crypto/rand"
	"slices"
	"testing"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/store/memory"
)

// A store that had the webhook upgrade but not token:access:read (the
// second upgrade): Open gives the new permission to the full managers,
// and TokenAccess answers for them; before, it was PermissionDenied.
func TestManagementUpgradeGrantsTokenAccessRead(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	master := make([]byte, 32)
	rand.Read(master)
	open := func() *Vault {
		t.Helper()
		v, err := Open(ctx, Options{Store: st, Keys: KeyOptions{MasterKey: master}, Retention: RetentionOptions{SweepInterval: -1}})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
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
	err = v.update(ctx, func(t *txn) error {
		vals, err := t.ScanValues(barrier.Tenant(tid).Records(EntityApplication))
		if err != nil {
			return err
		}
		for _, sv := range vals {
			rec := &applicationRecord{}
			if err := t.openRecord(sv.Key, sv.Raw, rec); err != nil {
				return err
			}
			rec.Permissions = slices.DeleteFunc(rec.Permissions, func(p string) bool { return p == PermTokenAccessRead })
			if err := t.putRecord(sv.Key, rec); err != nil {
				return err
			}
		}
		t.MarkAuthChanged()
		return t.PutCount(barrier.SysManagementUpgrade, 1)
	})
	if err != nil {
		t.Fatal(err)
	}
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
