package approvals_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestApprovalDeleteOwnTenant: with tenant.delete held, DeleteOwnTenant
// waits (202) and deletes nothing; the approval cannot be used before it
// is applied nor by another key; once applied, its requester deletes the
// tenant with it, after which no key of the tenant works. Without a
// policy, a key without tenant:delete is refused.
func TestApprovalDeleteOwnTenant(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		weak := e.App(t, tokenvault.Management, tokenvault.PermTenantRead)
		if err := e.V.DeleteOwnTenant(ctx, weak.Key); !errors.Is(err, tokenvault.ErrPermissionDenied) {
			t.Fatalf("DeleteOwnTenant without tenant:delete = %v, want PermissionDenied", err)
		}
		a := newApprovalEnv(t, e)
		_, err := e.V.SetApprovalPolicy(ctx, e.Mgmt, tokenvault.ApprovalPolicy{Required: 2,
			Approvers:  []string{a.approvers[0].ID, a.approvers[1].ID, a.approvers[2].ID},
			Operations: []string{tokenvault.ApprovalDeleteTenant}, TTLSeconds: 3600})
		ar := pending(t, "SetApprovalPolicy", err)
		for _, ap := range a.approvers[:2] {
			if _, err := e.V.ApproveChange(ctx, ap.Key, ar.Change.ID); err != nil {
				t.Fatal(err)
			}
		}
		ar = pending(t, "DeleteOwnTenant", e.V.DeleteOwnTenant(ctx, e.Mgmt))
		if ar.Change.Operation != tokenvault.ApprovalDeleteTenant || !strings.Contains(string(ar.Change.Before), `"id":"`+e.Boot.Tenant.ID+`"`) {
			t.Errorf("change %+v: want tenant.delete showing the tenant before", ar.Change)
		}
		if _, err := e.V.GetTenant(ctx, e.Mgmt); err != nil {
			t.Fatalf("the tenant after a held deletion: %v", err)
		}
		if err := e.V.DeleteOwnTenantApproved(ctx, e.Mgmt, ar.Change.ID); !errors.Is(err, tokenvault.ErrConflict) {
			t.Errorf("DeleteOwnTenantApproved before approval = %v, want Conflict", err)
		}
		if _, err := e.V.ApproveChange(ctx, a.approvers[0].Key, ar.Change.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.V.DeleteOwnTenantApproved(ctx, e.Mgmt, ar.Change.ID); !errors.Is(err, tokenvault.ErrConflict) {
			t.Errorf("DeleteOwnTenantApproved with 1 of 2 approvals = %v, want Conflict", err)
		}
		if _, err := e.V.ApproveChange(ctx, a.approvers[1].Key, ar.Change.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.V.DeleteOwnTenantApproved(ctx, a.approvers[2].Key, ar.Change.ID); !errors.Is(err, tokenvault.ErrPermissionDenied) {
			t.Errorf("DeleteOwnTenantApproved by another key = %v, want PermissionDenied", err)
		}
		if _, err := e.V.GetTenant(ctx, e.Mgmt); err != nil {
			t.Fatalf("the tenant after refused uses: %v", err)
		}
		if err := e.V.DeleteOwnTenantApproved(ctx, e.Mgmt, ar.Change.ID); err != nil {
			t.Fatalf("DeleteOwnTenantApproved = %v", err)
		}
		for _, k := range []tokenvault.Credential{e.Mgmt, a.approvers[0].Key} {
			if _, err := e.V.GetTenant(ctx, k); !errors.Is(err, tokenvault.ErrUnauthenticated) {
				t.Errorf("a key of the deleted tenant: %v, want Unauthenticated", err)
			}
		}
		if _, err := e.V.GetTenantByID(ctx, e.Boot.Tenant.ID); !errors.Is(err, tokenvault.ErrNotFound) {
			t.Errorf("GetTenantByID after the deletion = %v, want NotFound", err)
		}
	})
}
