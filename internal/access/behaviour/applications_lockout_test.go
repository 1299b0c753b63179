package access_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestLastManagerCannotBeRemoved: a tenant keeps a full manager (a
// management application holding every management permission, without
// an expiry); the change that would remove the last one is a Conflict and
// changes nothing.
func TestLastManagerCannotBeRemoved(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		boot := e.Boot.Application
		all := tokenvault.PermissionsFor(tokenvault.Management)
		err := e.V.DeleteApplication(ctx, e.Mgmt, boot.ID)
		vaulttest.WantKind(t, "deleting the only management application", err, tokenvault.Conflict)
		for _, drop := range []string{tokenvault.PermApplicationCreate, tokenvault.PermTenantUpdate} {
			kept := slices.DeleteFunc(slices.Clone(all), func(p string) bool { return p == drop })
			_, err = e.V.UpdateApplication(ctx, e.Mgmt, boot.ID, tokenvault.UpdateApplicationRequest{Name: boot.Name, Permissions: kept})
			vaulttest.WantKind(t, "taking "+drop+" from it", err, tokenvault.Conflict)
		}
		got, err := e.V.GetApplication(ctx, e.Mgmt, boot.ID)
		if err != nil || !slices.Equal(got.Permissions, boot.Permissions) {
			t.Fatalf("after the refusals: %+v, %v; want it unchanged", got, err)
		}

		// Others that do not count: a manager holding only
		// application:create (it could not give the other powers back),
		// and a full manager that expires.
		e.App(t, tokenvault.Management, tokenvault.PermApplicationCreate)
		later := e.Clock.Now().Add(time.Hour)
		if _, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
			Name: "expiring", Type: tokenvault.Management, ExpiresAt: &later, Permissions: all}); err != nil {
			t.Fatal(err)
		}
		vaulttest.WantKind(t, "deleting it next to a partial and an expiring manager", e.V.DeleteApplication(ctx, e.Mgmt, boot.ID), tokenvault.Conflict)

		// With a second full manager, either may go, but not both.
		second, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
			Name: "second", Type: tokenvault.Management, Permissions: all})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.V.DeleteApplication(ctx, e.Mgmt, boot.ID); err != nil {
			t.Fatalf("deleting the first of two full managers: %v", err)
		}
		vaulttest.WantKind(t, "deleting the second, now last", e.V.DeleteApplication(ctx, second.Key, second.ID), tokenvault.Conflict)
	})
}
