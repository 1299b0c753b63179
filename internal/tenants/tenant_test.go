package tenants

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

// createTenants creates n tenants in w, each in its own transaction, and
// returns what Create wrote for each, in creation (id) order.
func createTenants(t *testing.T, w *worktest.Work, n int) []*Created {
	t.Helper()
	apps := &access.Applications{Sys: w.Sys, Events: events.Applications{}}
	var out []*Created
	for i := range n {
		id := func(k int) string { return fmt.Sprintf("0190f5a2-9000-7000-8%03d-%012d", i, k) }
		keys, err := NewKeyring()
		if err != nil {
			t.Fatal(err)
		}
		err = w.Update(context.Background(), func(tx *unit.Tx) error {
			c, err := Create(tx, apps, New{ID: id(1), OwnerID: id(2), MemberID: id(3), AppID: id(4),
				Name: fmt.Sprintf("tenant %d", i), AppName: "Management", Owner: User{Email: fmt.Sprintf("owner%d@example.com", i)},
				Keys: keys, APIKey: unit.NewAPIKey()})
			if err == nil {
				out = append(out, c)
			}
			return err
		})
		if err != nil {
			t.Fatalf("Create(tenant %d) = %v", i, err)
		}
	}
	return out
}

// TestCreateTenant: a tenant is created with its OWNER member and a full
// manager, with their audit lines and events, registered and counted.
func TestCreateTenant(t *testing.T) {
	t.Parallel()
	w := worktest.New(t)
	c := createTenants(t, w, 1)[0]
	tid := c.Tenant.ID
	if c.Owner.Role != RoleOwner || c.Owner.User.ID != c.Tenant.OwnerID || c.Owner.User.Email != "owner0@example.com" {
		t.Errorf("Create: owner = %+v, want the OWNER, user %s", c.Owner, c.Tenant.OwnerID)
	}
	if !access.IsFullManager(c.Application) || c.Application.CreatedBy != c.Tenant.OwnerID {
		t.Errorf("Create: application = %+v, want a full manager created by the owner", c.Application)
	}
	var msgs []string
	for _, l := range w.Lines() {
		msgs = append(msgs, l.Message)
	}
	want := []string{`Tenant "tenant 0" created`, "Owner added", `Application "Management" created`}
	if !slices.Equal(msgs, want) {
		t.Errorf("log lines = %q, want %q", msgs, want)
	}
	var types []string
	for _, e := range w.Events() {
		types = append(types, e.Type)
	}
	if wantTypes := []string{events.TenantMemberCreated, events.ApplicationCreated}; !slices.Equal(types, wantTypes) {
		t.Errorf("events = %q, want %q", types, wantTypes)
	}
	err := w.View(context.Background(), func(tx *unit.Tx) error {
		for name, get := range map[string]func(*unit.Tx, string) (*Record, error){"Get": Get, "GetRegistered": GetRegistered} {
			rec, err := get(tx, tid)
			if err != nil || rec.Name != "tenant 0" || rec.CreatedBy != c.Tenant.OwnerID {
				t.Errorf("%s(%s) = %+v, %v, want the tenant", name, tid, rec, err)
			}
		}
		if ok, err := Any(tx); !ok || err != nil {
			t.Errorf("Any = %v, %v, want true", ok, err)
		}
		m, err := Membership(tx, tid, c.Owner.User.ID)
		if err != nil || m.ID != c.Owner.ID {
			t.Errorf("Membership(owner) = %+v, %v, want %s", m, err, c.Owner.ID)
		}
		if _, err := Membership(tx, tid, c.Tenant.ID); unit.ErrorKind(err) != unit.NotFound {
			t.Errorf("Membership(not a member) = %v, want NotFound", err)
		}
		if err := CheckInvite(tx, tid, "OWNER0@example.com"); unit.ErrorKind(err) != unit.Conflict {
			t.Errorf("CheckInvite(the owner's address) = %v, want Conflict", err)
		}
		if err := CheckInvite(tx, tid, "new@example.com"); err != nil {
			t.Errorf("CheckInvite(a new address) = %v, want nil", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestListTenants: pages of tenants follow the registry in id order, by
// number and by cursor, counting every registered tenant; a tenant being
// deleted leaves the list, the count and GetRegistered at once, and is
// among the unfinished deletions.
func TestListTenants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := worktest.New(t)
	created := createTenants(t, w, 5)
	list := func(pg paging.Pager) *paging.Page[Record] {
		t.Helper()
		var out *paging.Page[Record]
		err := w.View(ctx, func(tx *unit.Tx) error {
			var err error
			out, err = List(tx, pg)
			return err
		})
		if err != nil {
			t.Fatalf("List(%+v) = %v", pg, err)
		}
		return out
	}
	ids := func(p *paging.Page[Record]) []string {
		var out []string
		for _, r := range p.Data {
			out = append(out, r.ID)
		}
		return out
	}
	p1 := list(paging.Pager{Page: 1, Size: 2})
	if got := ids(p1); !slices.Equal(got, []string{created[0].Tenant.ID, created[1].Tenant.ID}) || p1.Pagination.TotalItems != 5 || p1.Pagination.After == "" {
		t.Errorf("List(page 1 of 2) = %v, total %d, after %q; want the first two of 5, a cursor", got, p1.Pagination.TotalItems, p1.Pagination.After)
	}
	start, _ := paging.DecodeCursor(p1.Pagination.After)
	p2 := list(paging.Pager{Page: 1, Size: 2, Start: start})
	p3 := list(paging.Pager{Page: 2, Size: 2})
	if !slices.Equal(ids(p2), ids(p3)) || !slices.Equal(ids(p2), []string{created[2].Tenant.ID, created[3].Tenant.ID}) {
		t.Errorf("List(cursor) = %v, List(page 2) = %v; want the third and fourth tenants both", ids(p2), ids(p3))
	}

	doomed := created[1].Tenant.ID
	signed := false
	err := w.Update(ctx, func(tx *unit.Tx) error {
		return MarkDeleting(tx, doomed, func() error { signed = true; return nil })
	})
	if err != nil || !signed {
		t.Fatalf("MarkDeleting = %v, signed %v; want nil, signed", err, signed)
	}
	all := list(paging.Pager{Page: 1, Size: 10})
	if slices.Contains(ids(all), doomed) || all.Pagination.TotalItems != 4 {
		t.Errorf("List after MarkDeleting = %v, total %d; want 4 without %s", ids(all), all.Pagination.TotalItems, doomed)
	}
	err = w.Update(ctx, func(tx *unit.Tx) error {
		if _, err := GetRegistered(tx, doomed); unit.ErrorKind(err) != unit.NotFound {
			t.Errorf("GetRegistered(being deleted) = %v, want NotFound", err)
		}
		if un, err := Unfinished(tx); err != nil || !slices.Equal(un, []string{doomed}) {
			t.Errorf("Unfinished = %v, %v, want [%s]", un, err, doomed)
		}
		if ok, err := tx.Has(barrier.Tenant(doomed).Keyring()); ok || err != nil {
			t.Errorf("keyring of a tenant being deleted: present %v, %v; want gone", ok, err)
		}
		// Marking it again leaves it as it is; an unknown tenant is NotFound.
		if err := MarkDeleting(tx, doomed, func() error { t.Error("signed twice"); return nil }); err != nil {
			t.Errorf("MarkDeleting(again) = %v, want nil", err)
		}
		if err := MarkDeleting(tx, "0190f5a2-9000-7000-8fff-000000000001", func() error { return nil }); unit.ErrorKind(err) != unit.NotFound {
			t.Errorf("MarkDeleting(unknown) = %v, want NotFound", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
