package tenants

import (
	"fmt"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// New is a tenant to create, with what the caller made for it: its ids,
// its keyring and the key of its first management application. The
// caller validated the names and the owner (ValidateName, ValidateUser).
type New struct {
	ID, OwnerID, MemberID, AppID string
	Name                         string
	// AppName names the first management application (ValidateName's
	// answer).
	AppName string
	Owner   User
	Keys    *barrier.Keys
	APIKey  string
}

// Created is what Create wrote: the tenant, its OWNER member and its
// first management application.
type Created struct {
	Tenant      *Record
	Owner       Member
	Application *access.ApplicationRecord
}

// Create writes tenant n in t: its keyring, its registry entry (and the
// count of tenants), its record, its OWNER member and the member's
// event, and its first management application holding every management
// permission (through apps, with its key lookup, event and log line),
// each with its audit line, made by the owner.
func Create(t *unit.Tx, apps *access.Applications, n New) (*Created, error) {
	tid := n.ID
	t.CreatedKeys(tid, n.Keys)
	unit.RecordTenant(t.Ctx, tid)
	if err := t.PutKeyring(barrier.Tenant(tid).Keyring(), n.Keys); err != nil {
		return nil, err
	}
	if err := t.PutIndex(barrier.Tenant(tid).Registry()); err != nil {
		return nil, err
	}
	Registered(t, 1)
	owner := unit.Actor{ID: n.OwnerID, Type: unit.ActorUser}
	rec := &Record{ID: tid, Name: n.Name, OwnerID: n.OwnerID, CreatedBy: n.OwnerID, CreatedAt: t.Now}
	if err := t.PutRecord(barrier.Tenant(tid).Record(unit.EntityTenant, tid), rec); err != nil {
		return nil, err
	}
	user := n.Owner
	user.ID = n.OwnerID
	member := Member{ID: n.MemberID, TenantID: tid, Role: RoleOwner, User: user, CreatedAt: t.Now}
	if err := t.PutRecord(barrier.Tenant(tid).Record(unit.EntityTenantMember, n.MemberID), MemberRecordOf(&member)); err != nil {
		return nil, err
	}
	if err := t.Log(owner, tid, unit.EntityTenant, tid, unit.OpCreate, fmt.Sprintf("Tenant %q created", n.Name)); err != nil {
		return nil, err
	}
	if err := t.Log(owner, tid, unit.EntityTenantMember, n.MemberID, unit.OpCreate, "Owner added"); err != nil {
		return nil, err
	}
	if err := EmitMember(t, events.TenantMemberCreated, owner, &member); err != nil {
		return nil, err
	}
	app := &access.ApplicationRecord{
		ID:          n.AppID,
		TenantID:    tid,
		Name:        n.AppName,
		Type:        access.Management,
		Permissions: access.PermissionsFor(access.Management),
		Rules:       []access.Rule{},
		CreatedBy:   n.OwnerID,
		CreatedAt:   t.Now,
	}
	if err := apps.Write(t, owner, app, n.APIKey); err != nil {
		return nil, err
	}
	return &Created{Tenant: rec, Owner: member, Application: app}, nil
}

// Get returns tenant tid's record, or NotFound when there is none.
func Get(t *unit.Tx, tid string) (*Record, error) {
	var rec Record
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntityTenant, tid), &rec)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, unit.NotFoundError("tenant")
	}
	return &rec, nil
}

// Registered tenants: those the registry lists, which a tenant leaves in
// the first transaction of its deletion.

// GetRegistered is Get for a tenant in the registry: a tenant being
// deleted, or an id that is not a UUID, is NotFound.
func GetRegistered(t *unit.Tx, tid string) (*Record, error) {
	if !unit.ValidID(tid) {
		return nil, unit.NotFoundError("tenant")
	}
	reg, err := t.Has(barrier.Tenant(tid).Registry())
	if err != nil {
		return nil, err
	}
	if !reg {
		return nil, unit.NotFoundError("tenant")
	}
	return Get(t, tid)
}

// Any reports whether the store holds any registered tenant.
func Any(t *unit.Tx) (bool, error) {
	found := false
	err := t.Scan(barrier.TenantRegistry, "", 1, func(barrier.Key, string) error {
		found = true
		return nil
	})
	return found, err
}

// List returns one page of the registered tenants, ordered by id, with a
// cursor: it walks the registry from pg's cursor and reads the records
// of the tenants it shows. TotalItems is the kept count of tenants
// (Registered). A page number costs its offset: (page-1)*size above
// paging.MaxListOffset is Invalid naming page.
func List(t *unit.Tx, pg paging.Pager) (*paging.Page[Record], error) {
	skip, pageNumber, err := pg.Offset("tenants")
	if err != nil {
		return nil, err
	}
	var ids []string
	err = t.Scan(barrier.TenantRegistry, pg.Start, skip+pg.Size+1, func(_ barrier.Key, tid string) error {
		ids = append(ids, tid)
		return nil
	})
	if err != nil {
		return nil, err
	}
	total, err := t.ReadCount(barrier.SysTenantCount)
	if err != nil {
		return nil, err
	}
	lo, hi := min(skip, len(ids)), min(skip+pg.Size, len(ids))
	p := paging.Pages(total, pageNumber, pg.Size)
	if hi < len(ids) {
		p.After = paging.EncodeCursor(ids[hi-1])
	}
	out := &paging.Page[Record]{Pagination: p, Data: make([]Record, 0, hi-lo)}
	for _, tid := range ids[lo:hi] {
		var rec Record
		ok, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntityTenant, tid), &rec)
		if err != nil {
			return nil, err
		}
		if ok {
			out.Data = append(out.Data, rec)
		}
	}
	return out, nil
}

// NewKeyring makes the keyring of a new tenant, before the transaction
// that creates it (Create), so that every run of that transaction writes
// the same one, and the caller caches it once it is committed.
func NewKeyring() (*barrier.Keys, error) {
	keys, err := barrier.NewKeys()
	if err != nil {
		return nil, unit.AsInternal(err)
	}
	return keys, nil
}
