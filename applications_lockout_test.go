package tokenvault_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
)

// TestLastManagerCannotBeRemoved: a tenant keeps a full manager (a
// management application holding every management permission, without
// an expiry); the change that would remove the last one is a Conflict and
// changes nothing.
func TestLastManagerCannotBeRemoved(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		boot := e.boot.Application
		all := tokenvault.PermissionsFor(tokenvault.Management)
		err := e.v.DeleteApplication(ctx, e.mgmt, boot.ID)
		wantKind(t, "deleting the only management application", err, tokenvault.Conflict)
		for _, drop := range []string{tokenvault.PermApplicationCreate, tokenvault.PermTenantUpdate} {
			kept := slices.DeleteFunc(slices.Clone(all), func(p string) bool { return p == drop })
			_, err = e.v.UpdateApplication(ctx, e.mgmt, boot.ID, tokenvault.UpdateApplicationRequest{Name: boot.Name, Permissions: kept})
			wantKind(t, "taking "+drop+" from it", err, tokenvault.Conflict)
		}
		got, err := e.v.GetApplication(ctx, e.mgmt, boot.ID)
		if err != nil || !slices.Equal(got.Permissions, boot.Permissions) {
			t.Fatalf("after the refusals: %+v, %v; want it unchanged", got, err)
		}

		// Others that do not count: a manager holding only
		// application:create (it could not give the other powers back),
		// and a full manager that expires.
		e.app(t, tokenvault.Management, tokenvault.PermApplicationCreate)
		later := e.clock.Now().Add(time.Hour)
		if _, err := e.v.CreateApplication(ctx, e.mgmt, tokenvault.CreateApplicationRequest{
			Name: "expiring", Type: tokenvault.Management, ExpiresAt: &later, Permissions: all}); err != nil {
			t.Fatal(err)
		}
		wantKind(t, "deleting it next to a partial and an expiring manager", e.v.DeleteApplication(ctx, e.mgmt, boot.ID), tokenvault.Conflict)

		// With a second full manager, either may go, but not both.
		second, err := e.v.CreateApplication(ctx, e.mgmt, tokenvault.CreateApplicationRequest{
			Name: "second", Type: tokenvault.Management, Permissions: all})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.v.DeleteApplication(ctx, e.mgmt, boot.ID); err != nil {
			t.Fatalf("deleting the first of two full managers: %v", err)
		}
		wantKind(t, "deleting the second, now last", e.v.DeleteApplication(ctx, second.Key, second.ID), tokenvault.Conflict)
	})
}
