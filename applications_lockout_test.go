package tokenvault_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
)

// TestLastManagerCannotBeRemoved: a tenant keeps at least one live
// management application holding application:create; the change that
// would remove the last one is a Conflict and changes nothing.
func TestLastManagerCannotBeRemoved(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		boot := e.boot.Application
		err := e.v.DeleteApplication(ctx, e.mgmt, boot.ID)
		wantKind(t, "deleting the only management application", err, tokenvault.Conflict)
		_, err = e.v.UpdateApplication(ctx, e.mgmt, boot.ID, tokenvault.UpdateApplicationRequest{
			Name: boot.Name, Permissions: []string{tokenvault.PermApplicationRead}})
		wantKind(t, "taking application:create from it", err, tokenvault.Conflict)
		got, err := e.v.GetApplication(ctx, e.mgmt, boot.ID)
		if err != nil || !slices.Equal(got.Permissions, boot.Permissions) {
			t.Fatalf("after the refusals: %+v, %v; want it unchanged", got, err)
		}

		// Others that do not count: a management application without
		// application:create, and one that expires.
		e.app(t, tokenvault.Management, tokenvault.PermApplicationRead)
		soon := e.clock.Now().Add(time.Minute)
		_, err = e.v.CreateApplication(ctx, e.mgmt, tokenvault.CreateApplicationRequest{
			Name: "expiring", Type: tokenvault.Management, ExpiresAt: &soon,
			Permissions: []string{tokenvault.PermApplicationCreate}})
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(2 * time.Minute)
		wantKind(t, "deleting it next to an expired one", e.v.DeleteApplication(ctx, e.mgmt, boot.ID), tokenvault.Conflict)

		// With a second live manager, either may go, but not both.
		second, err := e.v.CreateApplication(ctx, e.mgmt, tokenvault.CreateApplicationRequest{
			Name: "second", Type: tokenvault.Management, Permissions: boot.Permissions})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.v.DeleteApplication(ctx, e.mgmt, boot.ID); err != nil {
			t.Fatalf("deleting the first of two managers: %v", err)
		}
		wantKind(t, "deleting the second, now last", e.v.DeleteApplication(ctx, second.Key, second.ID), tokenvault.Conflict)
	})
}
