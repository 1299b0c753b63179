package access

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Management permissions added by a release.
//
// A management application can only give permissions it holds, so a
// permission that a release adds to the management type would be out of
// reach of every tenant made before it: its managers lack it and nobody
// could grant it, and none of them would count as a full manager any more
// (lockout.go). So each such release is an upgrade here, and
// the Vault's Open applies the ones a store has not had, once (the count at
// barrier.SysManagementUpgrade says how many it has had): every
// management application that never expires and holds every management
// permission of before the upgrade gets the new ones, with an audit line
// of the system. An application a tenant had left without some older
// management permission is not a full manager and gets nothing; an
// application from which a tenant later takes the new permissions keeps
// that choice, since an upgrade never runs twice.
//
// Instances sharing a store (PostgreSQL) may run an upgrade at once: each
// tenant's grant is one transaction that reads before it writes, and
// grants nothing twice.

// UpgradeManagers applies, in units of work of w, the management
// upgrades (ManagementUpgrades) the store has not had.
func UpgradeManagers(ctx context.Context, w *unit.Work) error {
	managementUpgrades := ManagementUpgrades()
	var done int
	var tids []string
	err := w.View(ctx, func(t *unit.Tx) error {
		n, err := t.ReadCount(barrier.SysManagementUpgrade)
		if err != nil || n >= len(managementUpgrades) {
			done = n
			return err
		}
		done, tids = n, nil
		return t.ScanKeys(barrier.TenantRegistry, func(_ barrier.Key, tid string) error {
			tids = append(tids, tid)
			return nil
		})
	})
	if err != nil || done >= len(managementUpgrades) {
		return err
	}
	before := ManagementPermissions()
	for _, added := range managementUpgrades {
		before = slices.DeleteFunc(before, func(p string) bool { return slices.Contains(added, p) })
	}
	for i := 0; i < done; i++ {
		before = append(before, managementUpgrades[i]...)
	}
	for _, added := range managementUpgrades[done:] {
		for _, tid := range tids {
			if err := w.Update(ctx, func(t *unit.Tx) error { return grantUpgrade(t, tid, before, added) }); err != nil {
				return fmt.Errorf("tokenvault: upgrading the management applications of a tenant: %w", err)
			}
		}
		before = append(before, added...)
	}
	return w.Update(ctx, func(t *unit.Tx) error {
		return t.PutCount(barrier.SysManagementUpgrade, int64(len(managementUpgrades)))
	})
}

// grantUpgrade adds the permissions added to every management application
// of tenant tid that never expires and holds every permission of before
// (a full manager as of before the upgrade) but not all of added.
func grantUpgrade(t *unit.Tx, tid string, before, added []string) error {
	vals, err := t.ScanValues(barrier.Tenant(tid).Records(unit.EntityApplication))
	if err != nil {
		return err
	}
	for _, sv := range vals {
		rec := &ApplicationRecord{}
		if err := t.OpenRecord(sv.Key, sv.Raw, rec); err != nil {
			return err
		}
		if !NeedsUpgrade(rec, before, added) {
			continue
		}
		var granted []string
		for _, p := range added {
			if !slices.Contains(rec.Permissions, p) {
				rec.Permissions = append(rec.Permissions, p)
				granted = append(granted, p)
			}
		}
		if err := t.PutRecord(sv.Key, rec); err != nil {
			return err
		}
		msg := fmt.Sprintf("Application %q given %s (new in this release)", rec.Name, strings.Join(granted, ", "))
		if err := t.Log(unit.SystemActor, tid, unit.EntityApplication, rec.ID, unit.OpUpdate, msg); err != nil {
			return err
		}
	}
	return nil
}
