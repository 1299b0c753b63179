package access

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

const (
	appTenant = "0190f5a2-8c1e-7b3a-9d4e-5f6a7b8c9d0f"
	appA      = "0190f5a2-9000-7000-8000-0000000000b1"
	appB      = "0190f5a2-9000-7000-8000-0000000000b2"
	appC      = "0190f5a2-9000-7000-8000-0000000000b3"
)

// putApplications writes apps to tenant appTenant, registered as a
// tenant, in a new Work.
func putApplications(t *testing.T, apps ...*ApplicationRecord) *worktest.Work {
	t.Helper()
	w := worktest.New(t)
	w.Tenant(t, appTenant)
	err := w.Update(context.Background(), func(tx *unit.Tx) error {
		if err := tx.PutIndex(barrier.Tenant(appTenant).Registry()); err != nil {
			return err
		}
		for _, a := range apps {
			a.TenantID = appTenant
			if err := tx.PutRecord(barrier.Tenant(appTenant).Record(unit.EntityApplication, a.ID), a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// fullManager is a full manager with id.
func fullManager(id string) *ApplicationRecord {
	return &ApplicationRecord{ID: id, Name: id, Type: Management, Permissions: PermissionsFor(Management)}
}

// TestLoadApplication: an application is found until it expires; an
// unknown or malformed id is none, and NotFound to MustApplication.
func TestLoadApplication(t *testing.T) {
	t.Parallel()
	expires := worktest.Start.Add(time.Minute)
	w := putApplications(t, &ApplicationRecord{ID: appA, Name: "a", Type: Private, ExpiresAt: &expires})
	check := func(id string, want bool) {
		t.Helper()
		err := w.View(context.Background(), func(tx *unit.Tx) error {
			rec, err := LoadApplication(tx, appTenant, id)
			if err != nil || (rec != nil) != want {
				t.Errorf("LoadApplication(%q) = %v, %v; want found %v", id, rec, err, want)
			}
			if _, err := MustApplication(tx, appTenant, id); !want && unit.ErrorKind(err) != unit.NotFound {
				t.Errorf("MustApplication(%q) = %v, want NotFound", id, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check(appA, true)
	check(appB, false)
	check("../"+appA, false)
	w.Advance(time.Minute)
	check(appA, false)
}

// TestKeepsAManager: a change that leaves a full manager passes; one
// that leaves none, by deleting the last or taking a permission from it,
// is ErrLastManager.
func TestKeepsAManager(t *testing.T) {
	t.Parallel()
	w := putApplications(t, fullManager(appA), fullManager(appB),
		&ApplicationRecord{ID: appC, Name: "c", Type: Management, Permissions: []string{PermApplicationRead}})
	partial := fullManager(appB)
	partial.Permissions = partial.Permissions[1:]
	err := w.View(context.Background(), func(tx *unit.Tx) error {
		for _, tc := range []struct {
			name    string
			id      string
			changed *ApplicationRecord
			want    error
		}{
			{"delete one of two", appA, nil, nil},
			{"delete a partial manager", appC, nil, nil},
			{"narrow one of two", appB, partial, nil},
		} {
			if err := KeepsAManager(tx, appTenant, tc.id, tc.changed); err != tc.want {
				t.Errorf("KeepsAManager(%s) = %v, want %v", tc.name, err, tc.want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Update(context.Background(), func(tx *unit.Tx) error {
		return tx.Delete(barrier.Tenant(appTenant).Record(unit.EntityApplication, appA))
	})
	if err != nil {
		t.Fatal(err)
	}
	err = w.View(context.Background(), func(tx *unit.Tx) error {
		if err := KeepsAManager(tx, appTenant, appB, nil); err != ErrLastManager {
			t.Errorf("KeepsAManager(delete the last) = %v, want ErrLastManager", err)
		}
		if err := KeepsAManager(tx, appTenant, appB, partial); err != ErrLastManager {
			t.Errorf("KeepsAManager(narrow the last) = %v, want ErrLastManager", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeManagers: a store that had no upgrade gives every full
// manager of before them the permissions each added, with a line of the
// system, and nothing to a partial manager; the upgrades run once.
func TestUpgradeManagers(t *testing.T) {
	t.Parallel()
	upgrades := ManagementUpgrades()
	var added []string
	for _, u := range upgrades {
		added = append(added, u...)
	}
	old := fullManager(appA)
	old.Permissions = slices.DeleteFunc(old.Permissions, func(p string) bool { return slices.Contains(added, p) })
	partial := &ApplicationRecord{ID: appB, Name: "b", Type: Management, Permissions: []string{PermApplicationRead}}
	w := putApplications(t, old, partial)
	ctx := context.Background()
	if err := UpgradeManagers(ctx, w.Work); err != nil {
		t.Fatal(err)
	}
	err := w.View(ctx, func(tx *unit.Tx) error {
		a, err := MustApplication(tx, appTenant, appA)
		if err != nil {
			return err
		}
		if !IsFullManager(a) {
			t.Errorf("the manager of before the upgrades holds %v after them, want every management permission", a.Permissions)
		}
		b, err := MustApplication(tx, appTenant, appB)
		if err != nil {
			return err
		}
		if !slices.Equal(b.Permissions, partial.Permissions) {
			t.Errorf("the partial manager holds %v after the upgrades, want %v", b.Permissions, partial.Permissions)
		}
		if n, err := tx.ReadCount(barrier.SysManagementUpgrade); err != nil || n != len(upgrades) {
			t.Errorf("upgrades done: %d, %v; want %d", n, err, len(upgrades))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := w.Lines()
	if len(lines) != len(upgrades) {
		t.Fatalf("%d lines for %d upgrades: %+v", len(lines), len(upgrades), lines)
	}
	for _, l := range lines {
		if l.EntityID != appA || l.ActorType != unit.ActorSystem || l.Operation != unit.OpUpdate {
			t.Errorf("upgrade line %+v, want an update of %s by the system", l, appA)
		}
	}
	if err := UpgradeManagers(ctx, w.Work); err != nil {
		t.Fatal(err)
	}
	if l := w.Lines(); len(l) != 0 {
		t.Errorf("a second run wrote %+v, want nothing", l)
	}
}
