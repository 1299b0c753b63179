package access_test

import (
	"slices"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// operation is one Vault method called with a key, for the permission
// matrix. setup runs before each call with the management key and returns
// the id the call works on.
type operation struct {
	name string
	perm string
	call func(v *tokenvault.Vault, key tokenvault.Credential, id string) error
}

var operations = []operation{
	{"CreateApplication", "application:create", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.CreateApplication(ctx, key, tokenvault.CreateApplicationRequest{Name: "x", Type: "private", Permissions: []string{"token:read"}})
		return err
	}},
	{"ListApplications", "application:read", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.ListApplications(ctx, key, tokenvault.ListApplicationsRequest{})
		return err
	}},
	{"GetApplication", "application:read", func(v *tokenvault.Vault, key tokenvault.Credential, id string) error {
		_, err := v.GetApplication(ctx, key, id)
		return err
	}},
	{"GetApplicationByKey", "application:read", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.GetApplicationByKey(ctx, key)
		return err
	}},
	{"UpdateApplication", "application:update", func(v *tokenvault.Vault, key tokenvault.Credential, id string) error {
		_, err := v.UpdateApplication(ctx, key, id, tokenvault.UpdateApplicationRequest{Name: "y", Permissions: []string{"token:use"}})
		return err
	}},
	{"RegenerateApplicationKey", "application:update", func(v *tokenvault.Vault, key tokenvault.Credential, id string) error {
		_, err := v.RegenerateApplicationKey(ctx, key, id)
		return err
	}},
	{"DeleteApplication", "application:delete", func(v *tokenvault.Vault, key tokenvault.Credential, id string) error {
		return v.DeleteApplication(ctx, key, id)
	}},
	{"ListLogs", "log:read", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.ListLogs(ctx, key, tokenvault.ListLogsRequest{})
		return err
	}},
	{"EntityTypes", "log:read", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.EntityTypes(ctx, key)
		return err
	}},
	{"GetTenant", "tenant:read", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.GetTenant(ctx, key)
		return err
	}},
	{"RotateDataKey", "tenant:update", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		return v.RotateDataKey(ctx, key)
	}},
	{"ListMembers", "tenant:member:read", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.ListMembers(ctx, key, tokenvault.ListMembersRequest{})
		return err
	}},
	{"ListInvitations", "tenant:invitation:read", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.ListInvitations(ctx, key, tokenvault.ListInvitationsRequest{})
		return err
	}},
	{"CreateFormula", "reactor:create", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.CreateFormula(ctx, key, tokenvault.FormulaRequest{Name: "f", Code: "module.exports = function () {}"})
		return err
	}},
	{"ListFormulas", "reactor:read", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.ListFormulas(ctx, key, tokenvault.ListFormulasRequest{})
		return err
	}},
	{"CreateReactor", "reactor:create", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.CreateReactor(ctx, key, tokenvault.CreateReactorRequest{Name: "r", Code: "module.exports = function () {}"})
		return err
	}},
	{"ListReactors", "reactor:read", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.ListReactors(ctx, key, tokenvault.ListReactorsRequest{})
		return err
	}},
	{"CreateProxy", "proxy:create", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.CreateProxy(ctx, key, tokenvault.ProxyRequest{Name: "p", DestinationURL: "https://example.com"})
		return err
	}},
	{"ListProxies", "proxy:read", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.ListProxies(ctx, key, tokenvault.ListProxiesRequest{})
		return err
	}},
	{"WebhookSecret", "tenant:read", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.WebhookSecret(ctx, key)
		return err
	}},
}

// TestPermissionMatrix calls every operation with a key holding exactly its
// permission (it succeeds), a key holding every other management permission
// (403), no key and an unknown key (401).
func TestPermissionMatrix(t *testing.T) {
	e := vaulttest.NewEnv(t)
	for _, op := range operations {
		t.Run(op.name, func(t *testing.T) {
			target := e.App(t, tokenvault.Private, "token:read").ID
			exact := e.App(t, tokenvault.Management, op.perm)
			var others []string
			for _, p := range tokenvault.PermissionsFor(tokenvault.Management) {
				if p != op.perm {
					others = append(others, p)
				}
			}
			without := e.App(t, tokenvault.Management, others...)
			private := e.App(t, tokenvault.Private, tokenvault.PermissionsFor(tokenvault.Private)...)

			vaulttest.WantKind(t, op.name+" with no key", op.call(e.V, "", target), tokenvault.Unauthenticated)
			vaulttest.WantKind(t, op.name+" with an unknown key", op.call(e.V, "key_unknown", target), tokenvault.Unauthenticated)
			vaulttest.WantKind(t, op.name+" without "+op.perm, op.call(e.V, without.Key, target), tokenvault.PermissionDenied)
			vaulttest.WantKind(t, op.name+" with a private key", op.call(e.V, private.Key, target), tokenvault.PermissionDenied)
			if err := op.call(e.V, exact.Key, target); err != nil {
				t.Errorf("%s with exactly %s = %v, want success", op.name, op.perm, err)
			}
		})
	}
}

func TestListPermissions(t *testing.T) {
	e := vaulttest.NewEnv(t)
	perms, err := e.V.ListPermissions(ctx, e.Mgmt, tokenvault.Public)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range perms {
		names = append(names, p.Type)
	}
	if want := []string{"fpe:encode", "token-intent:create", "token:create", "token:update"}; !slices.Equal(names, want) {
		t.Errorf("ListPermissions(public) = %v, want %v", names, want)
	}
	_, err = e.V.ListPermissions(ctx, e.Mgmt, "root")
	vaulttest.WantKind(t, "ListPermissions(root)", err, tokenvault.Invalid)
}
