package access_test

import (
	"context"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestCallInfoRecordsTenant: a call made with a CallInfo in its context
// reports the tenant its key belongs to, and nothing for a refused key.
func TestCallInfoRecordsTenant(t *testing.T) {
	ctx := context.Background()
	e := vaulttest.NewEnv(t)
	v := e.V
	a, b := e.Tenant(t, "A"), e.Tenant(t, "B")

	for _, tc := range []struct {
		name string
		key  tokenvault.Credential
		want string
	}{
		{"tenant A's key", a.Application.Key, a.Tenant.ID},
		{"tenant B's key", b.Application.Key, b.Tenant.ID},
		{"an unknown key", "key_unknown", ""},
	} {
		var info tokenvault.CallInfo
		v.GetTenant(tokenvault.WithCallInfo(ctx, &info), tc.key)
		if got := info.TenantID(); got != tc.want {
			t.Errorf("%s: TenantID() = %q, want %q", tc.name, got, tc.want)
		}
	}

	// Operations that authenticate without a permission check too.
	for name, call := range map[string]func(context.Context) error{
		"ListPermissions": func(ctx context.Context) error { _, err := v.ListPermissions(ctx, a.Application.Key, ""); return err },
		"AuthorizeSession": func(ctx context.Context) error {
			return v.AuthorizeSession(ctx, a.Application.Key, tokenvault.AuthorizeSessionRequest{Nonce: "unknown"})
		},
	} {
		var info tokenvault.CallInfo
		call(tokenvault.WithCallInfo(ctx, &info))
		if got := info.TenantID(); got != a.Tenant.ID {
			t.Errorf("%s: TenantID() = %q, want %q", name, got, a.Tenant.ID)
		}
	}

	var info tokenvault.CallInfo
	boot, err := v.CreateTenant(tokenvault.WithCallInfo(ctx, &info), tokenvault.CreateTenantRequest{Name: "C"})
	if err != nil {
		t.Fatal(err)
	}
	if got := info.TenantID(); got != boot.Tenant.ID {
		t.Errorf("CreateTenant: TenantID() = %q, want the new tenant %q", got, boot.Tenant.ID)
	}
}
