package tenants_test

import (
	"fmt"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// manyTenants is how many tenants TestTenantListPagesReadWhatTheyReturn
// creates: enough that a page reading the registry reads ten times its
// size.
const manyTenants = 300

// TestTenantListPagesReadWhatTheyReturn: with 300 tenants, ListTenants'
// first page, its cursor page and an offset page read a small multiple of
// their size from the store; every page counts every tenant, through
// creations and deletions; a cursor walk sees each tenant once; a deep
// page number is Invalid naming page.
func TestTenantListPagesReadWhatTheyReturn(t *testing.T) {
	cs := storetest.NewCountingStore(memory.New())
	e := vaulttest.NewEnvOn(t, cs)
	ids := []string{e.Boot.Tenant.ID}
	for i := range manyTenants - 1 {
		ids = append(ids, e.Tenant(t, fmt.Sprintf("T%03d", i)).Tenant.ID)
	}
	list := func(req tokenvault.PageRequest, read int) *tokenvault.Page[tokenvault.Tenant] {
		t.Helper()
		e.SettleChain(t)
		cctx, counted := storetest.Counted(ctx) // the call's reads, not the background's beside it
		p, err := e.V.ListTenants(cctx, req)
		if err != nil {
			t.Fatalf("ListTenants(%+v): %v", req, err)
		}
		if reads, bound := counted(), vaulttest.PageReadBound(read); reads > bound || reads == 0 {
			t.Errorf("ListTenants(%+v) read %d entries, bound %d", req, reads, bound)
		}
		return p
	}
	first := list(tokenvault.PageRequest{Size: 20}, 20)
	if len(first.Data) != 20 || first.Data[0].ID != ids[0] || first.Pagination.TotalItems != manyTenants || first.Pagination.After == "" {
		t.Fatalf("first page: %d tenants, %+v", len(first.Data), first.Pagination)
	}
	next := list(tokenvault.PageRequest{Size: 20, Start: first.Pagination.After}, 20)
	if len(next.Data) != 20 || next.Data[0].ID != ids[20] || next.Pagination.TotalItems != manyTenants {
		t.Errorf("cursor page: %d tenants, %+v", len(next.Data), next.Pagination)
	}
	third := list(tokenvault.PageRequest{Page: 3, Size: 20}, 60)
	if len(third.Data) != 20 || third.Data[0].ID != ids[40] || third.Pagination.TotalPages != manyTenants/20 {
		t.Errorf("page 3: %d tenants, %+v", len(third.Data), third.Pagination)
	}
	_, err := e.V.ListTenants(ctx, tokenvault.PageRequest{Page: 102, Size: 100})
	vaulttest.WantField(t, err, "page")

	// Deletions count down; the walk sees each tenant left once.
	for _, id := range ids[100:110] {
		if err := e.V.DeleteTenant(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	req := tokenvault.PageRequest{Size: 100}
	for {
		p := list(req, 100)
		if p.Pagination.TotalItems != manyTenants-10 {
			t.Errorf("after 10 deletions, total %d, want %d", p.Pagination.TotalItems, manyTenants-10)
		}
		for _, tn := range p.Data {
			if seen[tn.ID] {
				t.Errorf("tenant %s listed twice", tn.ID)
			}
			seen[tn.ID] = true
		}
		if p.Pagination.After == "" {
			break
		}
		req.Start = p.Pagination.After
	}
	if len(seen) != manyTenants-10 || seen[ids[105]] {
		t.Errorf("the walk saw %d tenants (the deleted %s: %v), want %d", len(seen), ids[105], seen[ids[105]], manyTenants-10)
	}
}

// TestTenantCountBuiltForAnOlderStore: a store written before the count of
// tenants existed (made here by removing it) gets it at Open.
func TestTenantCountBuiltForAnOlderStore(t *testing.T) {
	s := memory.New()
	e := vaulttest.NewEnvOn(t, s)
	for i := range 4 {
		e.Tenant(t, fmt.Sprint("T", i))
	}
	if err := e.V.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(tx store.Tx) error { return tx.Delete([]byte("sys/count/tenants")) }); err != nil {
		t.Fatal(err)
	}
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: s, Now: e.Clock.Now, Keys: tokenvault.KeyOptions{MasterKey: e.Key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	p, err := v.ListTenants(ctx, tokenvault.PageRequest{Size: 2})
	if err != nil || p.Pagination.TotalItems != 5 || len(p.Data) != 2 {
		t.Fatalf("ListTenants after the count was built = %+v, %v; want 5 tenants", p, err)
	}
	if _, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "New", Owner: tokenvault.User{Email: "o@example.com"}}); err != nil {
		t.Fatal(err)
	}
	if p, err := v.ListTenants(ctx, tokenvault.PageRequest{}); err != nil || p.Pagination.TotalItems != 6 || len(p.Data) != 6 {
		t.Errorf("ListTenants after one more = %+v, %v; want 6 tenants", p.Pagination, err)
	}
}
