package tenants_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// doomed is a tenant filled with a bit of everything that leaves keys in
// the store, under tenant/ and under sys/.
type doomed struct {
	boot    *tokenvault.TenantBootstrap
	keys    []tokenvault.Credential // API and session keys of the tenant
	tokenID string
	proxy   string // a proxy key
	invite  string // an invitation link token
}

// fill creates tenant name with applications (one expiring), a pending and
// an authorized session, tokens (n plain ones, an expiring one, a card
// with its cvc), an invitation, a proxy, and a rotated data key.
func fill(t *testing.T, v *tokenvault.Vault, mailer *testfake.Mailer, name string, n int, now time.Time) *doomed {
	t.Helper()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	d := &doomed{boot: boot, keys: []tokenvault.Credential{boot.Application.Key}}
	mgmt := boot.Application.Key
	later := now.Add(time.Hour)
	priv, err := v.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "backend", Type: tokenvault.Private, ExpiresAt: &later,
		Permissions: []string{"token:create", "token:read", "token:update", "token:delete", "token:use"}})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := v.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "web", Type: tokenvault.Public, Permissions: []string{"token:create"}})
	if err != nil {
		t.Fatal(err)
	}
	d.keys = append(d.keys, priv.Key, pub.Key)
	pending, err := v.CreateSession(ctx, pub.Key)
	if err != nil {
		t.Fatal(err)
	}
	authorized, err := v.CreateSession(ctx, pub.Key)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.AuthorizeSession(ctx, priv.Key, tokenvault.AuthorizeSessionRequest{Nonce: authorized.Nonce, Permissions: []string{"token:read"}}); err != nil {
		t.Fatal(err)
	}
	d.keys = append(d.keys, pending.SessionKey, authorized.SessionKey)
	body := map[string]any{"card": map[string]any{"type": "card", "data": map[string]any{"number": "4242424242424242", "expiration_month": 1, "expiration_year": 2040, "cvc": "123"}}}
	for i := range n {
		body[fmt.Sprintf("v%d", i)] = fmt.Sprintf("secret-%d", i)
	}
	if _, err := v.Tokenize(ctx, priv.Key, body); err != nil {
		t.Fatal(err)
	}
	tok, err := v.CreateToken(ctx, priv.Key, tokenvault.TokenRequest{Type: "token", Data: "expiring", ExpiresAt: &later,
		Metadata: map[string]string{"k": "v"}, SearchIndexes: []string{"{{ data }}"}})
	if err != nil {
		t.Fatal(err)
	}
	d.tokenID = tok.ID
	if _, err := v.CreateInvitation(ctx, mgmt, tokenvault.CreateInvitationRequest{Email: "x@example.com"}); err != nil {
		t.Fatal(err)
	}
	d.invite = mailer.Last(t).Token
	px, err := v.CreateProxy(ctx, mgmt, tokenvault.ProxyRequest{Name: "p", DestinationURL: "https://example.com"})
	if err != nil {
		t.Fatal(err)
	}
	d.proxy = px.Key
	if err := v.RotateDataKey(ctx, mgmt); err != nil {
		t.Fatal(err)
	}
	return d
}

// warm uses every key of d, so the auth cache holds them.
func (d *doomed) warm(t *testing.T, v *tokenvault.Vault) {
	t.Helper()
	if _, err := v.GetTenant(ctx, d.keys[0]); err != nil {
		t.Fatal(err)
	}
	for _, k := range d.keys[1:] {
		if _, err := v.GetToken(ctx, k, d.tokenID); tokenvault.ErrorKind(err) == tokenvault.Unauthenticated {
			t.Fatalf("a key of the tenant before its deletion: %v", err)
		}
	}
}

// refused checks that nothing of d works any more.
func (d *doomed) refused(t *testing.T, v *tokenvault.Vault) {
	t.Helper()
	for _, k := range d.keys {
		_, err := v.GetToken(ctx, k, d.tokenID)
		vaulttest.WantKind(t, "a key of the deleted tenant", err, tokenvault.Unauthenticated)
	}
	_, err := v.InvokeProxy(ctx, tokenvault.ProxyCall{ProxyKey: d.proxy, Method: "GET"})
	if err == nil {
		t.Error("the proxy key of the deleted tenant still works")
	}
	_, err = v.AcceptInvitation(ctx, d.invite, tokenvault.User{Email: "x@example.com"})
	vaulttest.WantKind(t, "the invitation link of the deleted tenant", err, tokenvault.NotFound)
	_, err = v.GetTenantByID(ctx, d.boot.Tenant.ID)
	vaulttest.WantKind(t, "GetTenantByID of the deleted tenant", err, tokenvault.NotFound)
}

// noKeyOf fails if any store key names tid, but its final audit
// checkpoint, which outlives it (checkpoints.go), and which it requires.
func noKeyOf(t *testing.T, s store.Store, tid string) {
	t.Helper()
	final := false
	for k := range vaulttest.Dump(t, s) {
		if k == "sys/chain-final/"+tid {
			final = true
			continue
		}
		if strings.Contains(k, tid) {
			t.Errorf("key %s of the deleted tenant is left", k)
		}
	}
	if !final {
		t.Errorf("no final audit checkpoint of the deleted tenant")
	}
}

// TestDeleteTenant deletes a tenant with some of everything, on every
// store: the store is then exactly as it was before the tenant was
// created, byte for byte (so no lookup, schedule entry or marker is left),
// but for the tenant's final audit checkpoint,
// and the other tenant is untouched.
func TestDeleteTenant(t *testing.T) {
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			mailer := &testfake.Mailer{}
			e := vaulttest.NewEnvOn(t, sk.Open(t), func(o *tokenvault.Options) { o.Mailer = mailer })
			keep := fill(t, e.V, mailer, "Keep", 3, e.Clock.Now())
			if _, err := e.V.Sweep(ctx); err != nil { // settles the one-time cvc scan
				t.Fatal(err)
			}
			// Keep's lines linked (the linker's work, not the deletion's).
			if err := vaulttest.LinkNow(ctx, e.V); err != nil {
				t.Fatal(err)
			}
			before := vaulttest.Dump(t, e.Store)
			d := fill(t, e.V, mailer, "Doomed", 1200, e.Clock.Now())
			d.warm(t, e.V)
			list, err := e.V.ListTenants(ctx, tokenvault.PageRequest{})
			if err != nil || len(list.Data) != 3 {
				t.Fatalf("ListTenants = %+v, %v; want 3 tenants", list, err)
			}
			if err := e.V.DeleteTenant(ctx, d.boot.Tenant.ID); err != nil {
				t.Fatalf("DeleteTenant: %v", err)
			}
			d.refused(t, e.V)
			noKeyOf(t, e.Store, d.boot.Tenant.ID)
			// But the count of tenants, its base row and the delta rows
			// each change adds (internal/barrier's Kept counts): its
			// value is checked below (ListTenants); and the background
			// leases, renewed meanwhile.
			after := vaulttest.Dump(t, e.Store)
			delete(after, "sys/chain-final/"+d.boot.Tenant.ID) // noKeyOf checked it
			for _, m := range []map[string][]byte{before, after} {
				if m["sys/count/tenants"] == nil {
					t.Errorf("no count of tenants in the store")
				}
				for k := range m {
					if strings.HasPrefix(k, "sys/lease/") || strings.HasPrefix(k, "sys/count/tenants") {
						delete(m, k)
					}
				}
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("the store after DeleteTenant differs from before the tenant (-before +after):\n%.3000s", diff)
			}
			err = e.V.DeleteTenant(ctx, d.boot.Tenant.ID)
			vaulttest.WantKind(t, "DeleteTenant again", err, tokenvault.NotFound)
			list, err = e.V.ListTenants(ctx, tokenvault.PageRequest{})
			if err != nil || len(list.Data) != 2 || list.Pagination.TotalItems != 2 {
				t.Fatalf("ListTenants after = %+v, %v; want 2 tenants", list, err)
			}
			if _, err := e.V.GetToken(ctx, keep.keys[1], keep.tokenID); err != nil {
				t.Errorf("the other tenant's token: %v", err)
			}
			e.Clock.Advance(2 * time.Hour)
			if _, err := e.V.Sweep(ctx); err != nil {
				t.Errorf("Sweep after the deletion: %v", err)
			}
		})
	}
}

// singleProcessFaults is a FaultStore that keeps the Vault's auth cache
// on, as a bbolt or memory store does.
type singleProcessFaults struct{ *storetest.FaultStore }

func (singleProcessFaults) SingleProcess() {}

// TestDeleteTenantResumesAfterACrash fails the store after n writes of a
// deletion, for several n: once the first transaction has committed, the
// tenant's keys are refused (from the auth cache too), and a Vault opened
// again on the file finishes the deletion in Sweep, leaving no key of the
// tenant.
func TestDeleteTenantResumesAfterACrash(t *testing.T) {
	for _, n := range []int{3, 4, 5, 6, 8, 9, 400, 1500, 3000} {
		t.Run(fmt.Sprintf("fail_after=%d", n), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "vault.db")
			bs, err := bolt.Open(path, &bolt.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			fs := storetest.NewFaultStore(bs)
			mailer := &testfake.Mailer{}
			clock := vaulttest.NewClock()
			key := vaulttest.NewMasterKey()
			v, err := tokenvault.Open(ctx, tokenvault.Options{Store: singleProcessFaults{fs}, Now: clock.Now, Mailer: mailer, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
			if err != nil {
				t.Fatal(err)
			}
			keep := fill(t, v, mailer, "Keep", 3, clock.Now())
			d := fill(t, v, mailer, "Doomed", 1200, clock.Now())
			d.warm(t, v)
			// The lines linked first, so that the writes counted are the
			// deletion's.
			if err := vaulttest.LinkNow(ctx, v); err != nil {
				t.Fatal(err)
			}
			fs.FailAfter(n)
			err = v.DeleteTenant(ctx, d.boot.Tenant.ID)
			fs.FailAfter(-1)
			vaulttest.WantKind(t, "DeleteTenant with failing writes", err, tokenvault.Internal)
			// The first transaction writes the marker, deletes the
			// chain's unsigned mark, writes the final checkpoint (at the
			// tenant and under sys/) and the chain head, deletes the
			// registry entry, the keyring and the re-seal marker, and
			// writes the count of tenants: nine writes.
			if n < 9 {
				if _, err := v.GetTenant(ctx, d.keys[0]); err != nil {
					t.Fatalf("the first transaction failed, yet the key is refused: %v", err)
				}
			} else {
				d.refused(t, v)
			}
			v.Close()
			bs.Close()

			bs, err = bolt.Open(path, &bolt.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer bs.Close()
			v, err = tokenvault.Open(ctx, tokenvault.Options{Store: bs, Now: clock.Now, Mailer: mailer, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			if n < 9 {
				if err := v.DeleteTenant(ctx, d.boot.Tenant.ID); err != nil {
					t.Fatal(err)
				}
			} else if _, err := v.Sweep(ctx); err != nil {
				t.Fatalf("Sweep: %v", err)
			}
			d.refused(t, v)
			noKeyOf(t, bs, d.boot.Tenant.ID)
			for k := range vaulttest.Dump(t, bs) {
				if strings.HasPrefix(k, "sys/deleting/") {
					t.Errorf("marker %s left", k)
				}
			}
			if _, err := v.GetToken(ctx, keep.keys[1], keep.tokenID); err != nil {
				t.Errorf("the other tenant's token: %v", err)
			}
		})
	}
}

// TestListTenantsPages walks the tenants by page and by cursor.
func TestListTenantsPages(t *testing.T) {
	e := vaulttest.NewEnv(t)
	want := []string{e.Boot.Tenant.ID}
	for i := range 4 {
		want = append(want, e.Tenant(t, fmt.Sprintf("T%d", i)).Tenant.ID)
	}
	var got []string
	req := tokenvault.PageRequest{Size: 2}
	for {
		p, err := e.V.ListTenants(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, tn := range p.Data {
			got = append(got, tn.ID)
		}
		if p.Pagination.After == "" {
			break
		}
		req.Start = p.Pagination.After
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tenants by cursor (-want +got):\n%s", diff)
	}
	p, err := e.V.ListTenants(ctx, tokenvault.PageRequest{Page: 3, Size: 2})
	if err != nil || len(p.Data) != 1 || p.Data[0].ID != want[4] || p.Pagination.TotalItems != 5 {
		t.Errorf("page 3 = %+v, %v", p, err)
	}
	_, err = e.V.ListTenants(ctx, tokenvault.PageRequest{Size: 101})
	vaulttest.WantKind(t, "ListTenants size 101", err, tokenvault.Invalid)
	got1, err := e.V.GetTenantByID(ctx, want[2])
	if err != nil || got1.Name != "T1" {
		t.Errorf("GetTenantByID = %+v, %v", got1, err)
	}
	for _, id := range []string{"nope", "01890000-0000-7000-8000-000000000000"} {
		_, err := e.V.GetTenantByID(ctx, id)
		vaulttest.WantKind(t, "GetTenantByID("+id+")", err, tokenvault.NotFound)
		vaulttest.WantKind(t, "DeleteTenant("+id+")", e.V.DeleteTenant(ctx, id), tokenvault.NotFound)
	}
}
