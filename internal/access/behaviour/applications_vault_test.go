package access_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

func TestApplicationLifecycle(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		ctx := context.Background()
		created, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
			Name: "Checkout", Type: tokenvault.Private, Permissions: []string{"token:create", "token:read"},
		})
		if err != nil {
			t.Fatalf("CreateApplication: %v", err)
		}
		if !strings.HasPrefix(string(created.Key), "key_") || len(created.Key) < 40 {
			t.Errorf("CreateApplication key = %q, want key_ and 256 bits", created.Key)
		}
		if created.TenantID != e.Boot.Tenant.ID || created.CreatedBy != e.Boot.Application.ID {
			t.Errorf("CreateApplication tenant/created_by = %s/%s, want %s/%s", created.TenantID, created.CreatedBy, e.Boot.Tenant.ID, e.Boot.Application.ID)
		}

		got, err := e.V.GetApplication(ctx, e.Mgmt, created.ID)
		if err != nil {
			t.Fatalf("GetApplication: %v", err)
		}
		want := *created
		want.Key = ""
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("GetApplication mismatch (-want +got):\n%s", diff)
		}

		self, err := e.V.GetApplicationByKey(ctx, e.Mgmt)
		if err != nil || self.ID != e.Boot.Application.ID || self.Key != "" {
			t.Errorf("GetApplicationByKey = %+v, %v, want the management application without key", self, err)
		}

		list, err := e.V.ListApplications(ctx, e.Mgmt, tokenvault.ListApplicationsRequest{})
		if err != nil {
			t.Fatalf("ListApplications: %v", err)
		}
		ids := []string{}
		for _, a := range list.Data {
			ids = append(ids, a.ID)
			if a.Key != "" {
				t.Errorf("ListApplications returned a key for %s", a.ID)
			}
		}
		if diff := cmp.Diff([]string{e.Boot.Application.ID, created.ID}, ids); diff != "" {
			t.Errorf("ListApplications ids (-want +got):\n%s", diff)
		}
		filtered, err := e.V.ListApplications(ctx, e.Mgmt, tokenvault.ListApplicationsRequest{IDs: []string{created.ID}})
		if err != nil || len(filtered.Data) != 1 || filtered.Data[0].ID != created.ID || filtered.Pagination.TotalItems != 1 {
			t.Errorf("ListApplications(id=%s) = %+v, %v", created.ID, filtered, err)
		}

		e.Clock.Advance(time.Second)
		updated, err := e.V.UpdateApplication(ctx, e.Mgmt, created.ID, tokenvault.UpdateApplicationRequest{
			Name: "Checkout v2", Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/pci/", Transform: "mask", Permissions: []string{"token:read"}}},
		})
		if err != nil {
			t.Fatalf("UpdateApplication: %v", err)
		}
		if updated.Name != "Checkout v2" || len(updated.Permissions) != 0 || len(updated.Rules) != 1 || updated.Type != tokenvault.Private ||
			updated.ModifiedAt == nil || !updated.ModifiedAt.Equal(e.Clock.Now()) || updated.ModifiedBy != e.Boot.Application.ID {
			t.Errorf("UpdateApplication = %+v", updated)
		}

		regen, err := e.V.RegenerateApplicationKey(ctx, e.Mgmt, created.ID)
		if err != nil {
			t.Fatalf("RegenerateApplicationKey: %v", err)
		}
		if regen.Key == "" || regen.Key == created.Key {
			t.Fatalf("RegenerateApplicationKey key = %q, want a new key", regen.Key)
		}
		_, err = e.V.ListPermissions(ctx, created.Key, "")
		vaulttest.WantKind(t, "old key after regenerate", err, tokenvault.Unauthenticated)
		if _, err := e.V.ListPermissions(ctx, regen.Key, ""); err != nil {
			t.Errorf("new key after regenerate: %v", err)
		}

		if err := e.V.DeleteApplication(ctx, e.Mgmt, created.ID); err != nil {
			t.Fatalf("DeleteApplication: %v", err)
		}
		_, err = e.V.ListPermissions(ctx, regen.Key, "")
		vaulttest.WantKind(t, "key after delete", err, tokenvault.Unauthenticated)
		_, err = e.V.GetApplication(ctx, e.Mgmt, created.ID)
		vaulttest.WantKind(t, "GetApplication after delete", err, tokenvault.NotFound)
		err = e.V.DeleteApplication(ctx, e.Mgmt, created.ID)
		vaulttest.WantKind(t, "DeleteApplication twice", err, tokenvault.NotFound)
	})
}

func TestCreateApplicationValidation(t *testing.T) {
	e := vaulttest.NewEnv(t)
	past := e.Clock.Now().Add(-time.Second)
	tests := []struct {
		name   string
		req    tokenvault.CreateApplicationRequest
		fields []string
	}{
		{"no name", tokenvault.CreateApplicationRequest{Type: "private", Permissions: []string{"token:read"}}, []string{"name"}},
		{"long name", tokenvault.CreateApplicationRequest{Name: strings.Repeat("é", 201), Type: "private", Permissions: []string{"token:read"}}, []string{"name"}},
		{"bad type", tokenvault.CreateApplicationRequest{Name: "a", Type: "admin", Permissions: []string{"token:read"}}, []string{"type"}},
		{"no grants", tokenvault.CreateApplicationRequest{Name: "a", Type: "private"}, []string{"permissions"}},
		{"unknown permission", tokenvault.CreateApplicationRequest{Name: "a", Type: "private", Permissions: []string{"token:eat"}}, []string{"permissions[0]"}},
		{"public may not read", tokenvault.CreateApplicationRequest{Name: "a", Type: "public", Permissions: []string{"token:create", "token:read"}}, []string{"permissions[1]"}},
		{"private may not manage", tokenvault.CreateApplicationRequest{Name: "a", Type: "private", Permissions: []string{"application:read"}}, []string{"permissions[0]"}},
		{"management may not use tokens", tokenvault.CreateApplicationRequest{Name: "a", Type: "management", Permissions: []string{"token:use"}}, []string{"permissions[0]"}},
		{"duplicate permission", tokenvault.CreateApplicationRequest{Name: "a", Type: "private", Permissions: []string{"token:use", "token:use"}}, []string{"permissions[1]"}},
		{"management rules", tokenvault.CreateApplicationRequest{Name: "a", Type: "management", Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Permissions: []string{"token:read"}}}}, []string{"rules"}},
		{"rule without container", tokenvault.CreateApplicationRequest{Name: "a", Type: "private", Rules: []tokenvault.AccessRule{{Priority: 1, Permissions: []string{"token:read"}}}}, []string{"rules[0].container"}},
		{"rule with conditions", tokenvault.CreateApplicationRequest{Name: "a", Type: "private", Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Conditions: []tokenvault.Condition{{Attribute: "id", Operator: "equals", Value: "x"}}, Permissions: []string{"token:read"}}}}, []string{"rules[0].conditions"}},
		{"bad container", tokenvault.CreateApplicationRequest{Name: "a", Type: "private", Rules: []tokenvault.AccessRule{{Priority: 1, Container: "pci", Permissions: []string{"token:read"}}}}, []string{"rules[0].container"}},
		{"bad transform", tokenvault.CreateApplicationRequest{Name: "a", Type: "private", Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "shout", Permissions: []string{"token:read"}}}}, []string{"rules[0].transform"}},
		{"priority zero and duplicate", tokenvault.CreateApplicationRequest{Name: "a", Type: "private", Rules: []tokenvault.AccessRule{
			{Priority: 0, Container: "/", Permissions: []string{"token:read"}},
			{Priority: 2, Container: "/", Permissions: []string{"token:read"}},
			{Priority: 2, Container: "/", Permissions: []string{"token:read"}},
		}}, []string{"rules[0].priority", "rules[2].priority"}},
		{"rule grants management", tokenvault.CreateApplicationRequest{Name: "a", Type: "private", Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Permissions: []string{"log:read"}}}}, []string{"rules[0].permissions[0]"}},
		{"expired", tokenvault.CreateApplicationRequest{Name: "a", Type: "private", Permissions: []string{"token:read"}, ExpiresAt: &past}, []string{"expires_at"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.V.CreateApplication(context.Background(), e.Mgmt, tc.req)
			var ve *tokenvault.Error
			if !errors.As(err, &ve) || ve.Kind != tokenvault.Invalid {
				t.Fatalf("CreateApplication = %v, want Invalid", err)
			}
			var fields []string
			for f := range ve.Fields {
				fields = append(fields, f)
			}
			if diff := cmp.Diff(tc.fields, fields, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("error fields (-want +got):\n%s\n%v", diff, err)
			}
		})
	}
	// Nothing was created by any of them.
	list, err := e.V.ListApplications(context.Background(), e.Mgmt, tokenvault.ListApplicationsRequest{})
	if err != nil || list.Pagination.TotalItems != 1 {
		t.Errorf("applications after invalid creates = %+v, %v; want only the bootstrap one", list, err)
	}
}

func TestRuleTransformDefaultsToRedact(t *testing.T) {
	e := vaulttest.NewEnv(t)
	a, err := e.V.CreateApplication(context.Background(), e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: "a", Type: "private", Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/pci/", Permissions: []string{"token:read"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if a.Rules[0].Transform != tokenvault.TransformRedact {
		t.Errorf("rule transform = %q, want redact", a.Rules[0].Transform)
	}
}

func TestManagementKeyCannotEscalate(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	narrow := e.App(t, tokenvault.Management, "application:create", "application:update")
	_, err := e.V.CreateApplication(ctx, narrow.Key, tokenvault.CreateApplicationRequest{
		Name: "wide", Type: tokenvault.Management, Permissions: []string{"application:create", "log:read"},
	})
	vaulttest.WantKind(t, "narrow key creating a wider management application", err, tokenvault.PermissionDenied)
	_, err = e.V.RegenerateApplicationKey(ctx, narrow.Key, e.Boot.Application.ID)
	vaulttest.WantKind(t, "narrow key regenerating the owner's key", err, tokenvault.PermissionDenied)
	_, err = e.V.UpdateApplication(ctx, narrow.Key, narrow.ID, tokenvault.UpdateApplicationRequest{Name: "n", Permissions: []string{"log:read"}})
	vaulttest.WantKind(t, "narrow key widening itself", err, tokenvault.PermissionDenied)
	// Within its own powers it works.
	if _, err := e.V.CreateApplication(ctx, narrow.Key, tokenvault.CreateApplicationRequest{
		Name: "same", Type: tokenvault.Management, Permissions: []string{"application:create"},
	}); err != nil {
		t.Errorf("narrow key creating a narrower management application: %v", err)
	}
	if _, err := e.V.CreateApplication(ctx, narrow.Key, tokenvault.CreateApplicationRequest{
		Name: "backend", Type: tokenvault.Private, Permissions: []string{"token:use"},
	}); err != nil {
		t.Errorf("narrow key creating a private application: %v", err)
	}
}

func TestApplicationExpiry(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		ctx := context.Background()
		at := e.Clock.Now().Add(time.Hour)
		a, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
			Name: "temp", Type: tokenvault.Management, Permissions: []string{"log:read"}, ExpiresAt: &at,
		})
		if err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Hour - time.Nanosecond)
		if _, err := e.V.EntityTypes(ctx, a.Key); err != nil {
			t.Fatalf("key 1ns before expiry: %v", err)
		}
		if n, err := e.V.Sweep(ctx); err != nil || n != 0 {
			t.Fatalf("Sweep before expiry = %d, %v; want 0", n, err)
		}
		e.Clock.Advance(time.Nanosecond)
		_, err = e.V.EntityTypes(ctx, a.Key)
		vaulttest.WantKind(t, "key at the instant of expiry", err, tokenvault.Unauthenticated)
		_, err = e.V.GetApplication(ctx, e.Mgmt, a.ID)
		vaulttest.WantKind(t, "GetApplication of an expired application", err, tokenvault.NotFound)
		if n, err := e.V.Sweep(ctx); err != nil || n != 1 {
			t.Fatalf("Sweep at expiry = %d, %v; want 1", n, err)
		}
		// The expired key's refused call is its own line (outcome denied).
		logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: "application", EntityID: a.ID, Outcome: tokenvault.OutcomeAllowed})
		if err != nil {
			t.Fatal(err)
		}
		if len(logs.Data) != 2 || logs.Data[0].Operation != "delete" || logs.Data[0].ActorType != "system" {
			t.Errorf("logs of expired application = %+v, want create then a system delete", logs.Data)
		}
		denied, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: "application", EntityID: a.ID, Outcome: tokenvault.OutcomeDenied})
		if err != nil {
			t.Fatal(err)
		}
		if len(denied.Data) != 1 || denied.Data[0].ActorID != a.ID || !strings.Contains(denied.Data[0].Message, "expired") {
			t.Errorf("denied lines of the expired application = %+v, want its refused call", denied.Data)
		}
		if n, err := e.V.Sweep(ctx); err != nil || n != 0 {
			t.Errorf("second Sweep = %d, %v; want 0", n, err)
		}
	})
}

func TestSweepManyInBatches(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	at := e.Clock.Now().Add(time.Minute)
	for i := 0; i < 250; i++ {
		if _, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
			Name: "temp", Type: tokenvault.Public, Permissions: []string{"token:create"}, ExpiresAt: &at,
		}); err != nil {
			t.Fatal(err)
		}
	}
	e.Clock.Advance(time.Minute)
	if n, err := e.V.Sweep(ctx); err != nil || n != 250 {
		t.Fatalf("Sweep = %d, %v; want 250", n, err)
	}
	list, err := e.V.ListApplications(ctx, e.Mgmt, tokenvault.ListApplicationsRequest{})
	if err != nil || list.Pagination.TotalItems != 1 {
		t.Errorf("applications after sweep = %d, %v; want 1", list.Pagination.TotalItems, err)
	}
}

func TestOtherTenantIsNotFound(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	other := e.Tenant(t, "Other")
	theirs := other.Application.ID
	_, err := e.V.GetApplication(ctx, e.Mgmt, theirs)
	vaulttest.WantKind(t, "GetApplication of another tenant's app", err, tokenvault.NotFound)
	_, err = e.V.UpdateApplication(ctx, e.Mgmt, theirs, tokenvault.UpdateApplicationRequest{Name: "x", Permissions: []string{"log:read"}})
	vaulttest.WantKind(t, "UpdateApplication of another tenant's app", err, tokenvault.NotFound)
	_, err = e.V.RegenerateApplicationKey(ctx, e.Mgmt, theirs)
	vaulttest.WantKind(t, "RegenerateApplicationKey of another tenant's app", err, tokenvault.NotFound)
	err = e.V.DeleteApplication(ctx, e.Mgmt, theirs)
	vaulttest.WantKind(t, "DeleteApplication of another tenant's app", err, tokenvault.NotFound)
	list, err := e.V.ListApplications(ctx, e.Mgmt, tokenvault.ListApplicationsRequest{IDs: []string{theirs}})
	if err != nil || len(list.Data) != 0 {
		t.Errorf("ListApplications(id of another tenant) = %+v, %v; want empty", list, err)
	}
	// Their key still works: nothing was changed.
	if _, err := e.V.GetApplicationByKey(ctx, other.Application.Key); err != nil {
		t.Errorf("other tenant's key after the attempts: %v", err)
	}
}

func TestBadIDs(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	for _, id := range []string{"", "nope", "../../sys/keyring", strings.Repeat("a", 5000)} {
		_, err := e.V.GetApplication(ctx, e.Mgmt, id)
		vaulttest.WantKind(t, "GetApplication("+id[:min(len(id), 20)]+")", err, tokenvault.NotFound)
	}
	_, err := e.V.ListApplications(ctx, e.Mgmt, tokenvault.ListApplicationsRequest{IDs: []string{"nope"}})
	vaulttest.WantKind(t, "ListApplications(id=nope)", err, tokenvault.Invalid)
}
