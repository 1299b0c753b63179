package vaulttest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/seal"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// TestResealAfterDataKeyRotation: after RotateDataKey, Reseal seals every
// record of the tenant (over several batches) with the new term, leaves
// other tenants alone, changes no value, logs it once, and then has
// nothing left to do.
func TestResealAfterDataKeyRotation(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		other := e.Tenant(t, "Other")
		app := e.Reader(t, "reveal", "token:create", "token:read")
		body := map[string]any{}
		for i := range 300 {
			body[fmt.Sprint("k", i)] = fmt.Sprint("value ", i)
		}
		out, err := e.V.Tokenize(ctx, app.Key, body)
		if err != nil {
			t.Fatal(err)
		}
		ids := out.(map[string]any)

		// terms counts the sealed entries of a tenant by term.
		terms := func(tid string) map[uint32]int {
			t.Helper()
			n := map[uint32]int{}
			for k, v := range vaulttest.Dump(t, e.Store) {
				if !strings.HasPrefix(k, "tenant/"+tid+"/") || strings.HasSuffix(k, "/keyring") || len(v) == 0 {
					continue
				}
				term, ok := seal.Term(v)
				if !ok {
					t.Fatalf("%s holds %d bytes that are not sealed", k, len(v))
				}
				n[term]++
			}
			return n
		}
		tid := e.Boot.Tenant.ID
		// The linker writes each line's link record beside the calls: the
		// lines so far linked, the snapshots below count only the pass's
		// work.
		e.SettleChain(t)
		before := terms(tid)
		if len(before) != 1 || before[1] < 600 {
			t.Fatalf("before rotating: terms %v, want only term 1 on 600 entries or more (several batches)", before)
		}
		otherBefore := terms(other.Tenant.ID)

		if err := e.V.RotateDataKey(ctx, e.Mgmt); err != nil {
			t.Fatal(err)
		}
		e.SettleChain(t)
		stale := terms(tid)[1]       // the rotation's own log line included
		e.Clock.Advance(time.Minute) // on a shared store the pass waits for every instance's cache
		n, err := e.V.Reseal(ctx)
		if err != nil {
			t.Fatalf("Reseal: %v", err)
		}
		e.SettleChain(t)
		after := terms(tid)
		if len(after) != 1 || after[2] == 0 {
			t.Errorf("after Reseal: terms %v, want every entry on term 2", after)
		}
		if n != stale {
			t.Errorf("Reseal = %d, want the %d entries sealed with term 1", n, stale)
		}
		if got := terms(other.Tenant.ID); fmt.Sprint(got) != fmt.Sprint(otherBefore) {
			t.Errorf("the other tenant's terms went from %v to %v", otherBefore, got)
		}
		if n, err := e.V.Reseal(ctx); n != 0 || err != nil {
			t.Errorf("Reseal again = %d, %v; want nothing to do", n, err)
		}

		for _, k := range []string{"k0", "k299"} {
			tok, err := e.V.GetToken(ctx, app.Key, ids[k].(string))
			if err != nil || tok.Data != body[k] {
				t.Errorf("GetToken(%s) after re-sealing = %+v, %v", k, tok, err)
			}
		}
		logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityTenant, EntityID: tid})
		if err != nil {
			t.Fatal(err)
		}
		resealed := 0
		for _, l := range logs.Data {
			if l.Message == "Records re-sealed with data key term 2" {
				resealed++
			}
		}
		if resealed != 1 {
			t.Errorf("%d re-seal log lines, want 1: %+v", resealed, logs.Data)
		}
	})
}

// TestResealSkipsADamagedEntry: an entry that does not open is left as
// it is, and the rest of the tenant is re-sealed.
func TestResealSkipsADamagedEntry(t *testing.T) {
	e := vaulttest.NewEnv(t)
	a := e.App(t, tokenvault.Private, "token:read")
	b := e.App(t, tokenvault.Private, "token:use")
	damaged := "tenant/" + e.Boot.Tenant.ID + "/application/" + a.ID
	raw := vaulttest.Dump(t, e.Store)[damaged]
	raw[len(raw)-1] ^= 1
	err := e.Store.Update(context.Background(), func(tx store.Tx) error { return tx.Put([]byte(damaged), raw) })
	if err != nil {
		t.Fatal(err)
	}
	if err := e.V.RotateDataKey(ctx, e.Mgmt); err != nil {
		t.Fatal(err)
	}
	if _, err := e.V.Reseal(ctx); err != nil {
		t.Fatalf("Reseal: %v", err)
	}
	all := vaulttest.Dump(t, e.Store)
	if term, _ := seal.Term(all["tenant/"+e.Boot.Tenant.ID+"/application/"+b.ID]); term != 2 {
		t.Errorf("the sound record is on term %d, want 2", term)
	}
	if term, _ := seal.Term(all[damaged]); term != 1 {
		t.Errorf("the damaged record is on term %d, want 1 (left as it was)", term)
	}
	for k := range all {
		if strings.HasPrefix(k, "sys/reseal/") {
			t.Errorf("%s is left: the pass did not finish", k)
		}
	}
}

// TestResealWithTwoInstances: on a store shared by two Vaults, the one
// that did not rotate seals with the new term within keyringTTL, and the
// re-seal pass starts only after that, so it catches what was sealed with
// the old term meanwhile.
func TestResealWithTwoInstances(t *testing.T) {
	clock := vaulttest.NewClock()
	shared := storetest.NewFaultStore(memory.New()) // not a single-process store
	key := vaulttest.NewMasterKey()
	open := func() *tokenvault.Vault {
		v, err := tokenvault.Open(ctx, tokenvault.Options{Store: shared, Now: clock.Now, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		return v
	}
	v1, v2 := open(), open()
	boot, err := v1.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v1.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "w", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	create := func(v *tokenvault.Vault) string {
		t.Helper()
		tok, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
		if err != nil {
			t.Fatal(err)
		}
		return "tenant/" + boot.Tenant.ID + "/token/" + tok.ID
	}
	termOf := func(k string) uint32 {
		t.Helper()
		n, _ := seal.Term(vaulttest.Dump(t, shared)[k])
		return n
	}
	create(v2) // v2 caches term 1

	if err := v1.RotateDataKey(ctx, boot.Application.Key); err != nil {
		t.Fatal(err)
	}
	if n, err := v1.Reseal(ctx); n != 0 || err != nil {
		t.Fatalf("Reseal right after rotating = %d, %v; want it to wait", n, err)
	}
	stale := create(v2)
	if got := termOf(stale); got != 1 {
		t.Fatalf("v2 sealed on term %d within keyringTTL; the test expects its cached term 1", got)
	}
	clock.Advance(6 * time.Second)
	if got := termOf(create(v2)); got != 2 {
		t.Errorf("v2 seals on term %d after keyringTTL, want 2", got)
	}
	clock.Advance(6 * time.Second)
	if n, err := v1.Reseal(ctx); n == 0 || err != nil {
		t.Fatalf("Reseal after the wait = %d, %v", n, err)
	}
	if got := termOf(stale); got != 2 {
		t.Errorf("the token v2 sealed with the old term is on term %d after the pass, want 2", got)
	}
}
