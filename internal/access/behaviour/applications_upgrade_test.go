package access_test

import (
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// A store written by the release before webhooks: its managers lack the
// webhook permissions and nobody could grant them. Open gives them to the
// full managers, once, with an audit line; a manager the tenant had left
// without an older management permission gets nothing, and a tenant that
// takes the new permissions away later is not overruled by the next Open.
func TestManagementUpgradeGrantsTheNewPermissionsOnce(t *testing.T) {
	open := upgradeStore(t)
	v := open()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Old", Owner: tokenvault.User{Email: "owner@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	tid, mgmt := boot.Tenant.ID, boot.Application.Key
	partialPerms := slices.DeleteFunc(access.ManagementPermissions(), func(p string) bool { return p == tokenvault.PermLogRead })
	partial, err := v.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "partial", Type: tokenvault.Management, Permissions: partialPerms})
	if err != nil {
		t.Fatal(err)
	}
	webhookPerms := access.ManagementUpgrades()[0]
	// Strip the webhook permissions from every application, and with
	// forget, the record of the upgrade: the store as the release before
	// left it.
	strip := func(forget bool) {
		t.Helper()
		upgraded := -1
		if forget {
			upgraded = 0
		}
		withoutPermissions(t, v, tid, webhookPerms, upgraded)
	}
	hook := tokenvault.WebhookRequest{Name: "h", URL: "https://hooks.example.com/in", Events: []string{"*"}, Status: tokenvault.WebhookEnabled}
	strip(true)
	if _, err := v.CreateWebhook(ctx, mgmt, hook); tokenvault.ErrorKind(err) != tokenvault.PermissionDenied {
		t.Fatalf("before the upgrade: CreateWebhook = %v, want PermissionDenied", err)
	}
	v.Close()

	v = open()
	if _, err := v.CreateWebhook(ctx, mgmt, hook); err != nil {
		t.Fatalf("after the upgrade: CreateWebhook = %v", err)
	}
	got, err := v.GetApplication(ctx, mgmt, partial.ID)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(got.Permissions, func(p string) bool { return strings.HasPrefix(p, "webhook:") }) {
		t.Errorf("a manager without log:read was given %v", got.Permissions)
	}
	logs, err := v.ListLogs(ctx, mgmt, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityApplication, EntityID: boot.Application.ID})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(logs.Data, func(l tokenvault.Log) bool {
		return l.ActorType == tokenvault.ActorSystem && strings.Contains(l.Message, "webhook:create")
	}) {
		t.Errorf("no audit line of the upgrade in %+v", logs.Data)
	}

	// The tenant takes them away; the next Open leaves that choice.
	strip(false)
	v.Close()
	v = open()
	defer v.Close()
	if _, err := v.CreateWebhook(ctx, mgmt, hook); tokenvault.ErrorKind(err) != tokenvault.PermissionDenied {
		t.Fatalf("an upgrade ran twice: CreateWebhook = %v, want PermissionDenied", err)
	}
}

// upgradeStore returns a function that opens a Vault, each time, on one
// memory store under one master key: the same store across releases.
func upgradeStore(t *testing.T) func() *tokenvault.Vault {
	st := memory.New()
	master := make([]byte, 32)
	rand.Read(master)
	return func() *tokenvault.Vault {
		t.Helper()
		v, err := tokenvault.Open(context.Background(), tokenvault.Options{Store: st, Keys: tokenvault.KeyOptions{MasterKey: master},
			Retention: tokenvault.RetentionOptions{SweepInterval: -1}, Outbound: tokenvault.OutboundOptions{AllowPrivateDestinations: true}})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// withoutPermissions takes perms from every application of tenant tid
// and, unless upgraded is negative, records that the store had that many
// management upgrades: the store as an older release left it.
func withoutPermissions(t *testing.T, v *tokenvault.Vault, tid string, perms []string, upgraded int) {
	t.Helper()
	err := vaulttest.Update(ctx, v, func(t *unit.Tx) error {
		vals, err := t.ScanValues(barrier.Tenant(tid).Records(tokenvault.EntityApplication))
		if err != nil {
			return err
		}
		for _, sv := range vals {
			rec := &access.ApplicationRecord{}
			if err := t.OpenRecord(sv.Key, sv.Raw, rec); err != nil {
				return err
			}
			rec.Permissions = slices.DeleteFunc(rec.Permissions, func(p string) bool { return slices.Contains(perms, p) })
			if err := t.PutRecord(sv.Key, rec); err != nil {
				return err
			}
		}
		t.MarkAuthChanged()
		if upgraded < 0 {
			return nil
		}
		return t.PutCount(barrier.SysManagementUpgrade, int64(upgraded))
	})
	if err != nil {
		t.Fatal(err)
	}
}
