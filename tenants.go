package tokenvault

import (
	"context"
	"time"

	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Tenant is an isolated customer of the Vault: every other resource belongs
// to exactly one tenant, and a key of one tenant never sees another's.
type Tenant struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	OwnerID    string     `json:"owner_id"`
	CreatedBy  string     `json:"created_by,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	ModifiedBy string     `json:"modified_by,omitempty"`
	ModifiedAt *time.Time `json:"modified_at,omitempty"`
	// Purposes are the purposes of access its data may be read for
	// (SetPurposes); empty for none.
	Purposes []Purpose `json:"purposes,omitempty"`
}

// User is a person who is a member of tenants. Picture, when set, is an
// http or https URL of at most 2048 bytes: it is shown in consoles as an
// image, so a javascript: or data: address is refused.
type User = tenants.User

// validateUser checks what a caller sets of a user, other than its id,
// naming each field under path ("owner", "user").
func validateUser(path string, u User, fe unit.FieldErrors) {
	tenants.ValidateUser(path, u, maxNameLength, fe)
}

// Member roles.
const (
	RoleOwner = tenants.RoleOwner
	RoleAdmin = tenants.RoleAdmin
)

// TenantMember is a user's membership of a tenant.
type TenantMember = tenants.Member

// CreateTenantRequest describes a new tenant and its owner.
type CreateTenantRequest struct {
	Name string `json:"name"`
	// Owner becomes the tenant's OWNER member. ID is assigned; the other
	// fields are optional.
	Owner User `json:"owner"`
	// ApplicationName names the first management application. Empty:
	// "Management".
	ApplicationName string `json:"application_name"`
}

// TenantBootstrap is what CreateTenant returns: the tenant, its owner and its
// first management application, whose Key is shown this once.
type TenantBootstrap struct {
	Tenant      Tenant       `json:"tenant"`
	Owner       TenantMember `json:"owner"`
	Application Application  `json:"application"`
}

// CreateTenant creates a tenant with its OWNER member and a first management
// application holding every management permission. It takes no key: it is
// how a host program bootstraps (over HTTP, package httpapi offers it to the
// operator key only, at POST /operator/tenants).
//
// Returns Invalid for a bad name or owner e-mail, StorageFull, or
// Internal.
func (v *Vault) CreateTenant(ctx context.Context, req CreateTenantRequest) (*TenantBootstrap, error) {
	fe := unit.FieldErrors{}
	appName := tenants.ValidateName(req.Name, req.ApplicationName, maxNameLength, fe)
	validateUser("owner", req.Owner, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	keys, err := tenants.NewKeyring()
	if err != nil {
		return nil, err
	}
	now := v.now().UTC()
	tid, uid, mid, aid := v.ids.Next(now), v.ids.Next(now), v.ids.Next(now), v.ids.Next(now)
	apiKey := unit.NewAPIKey()

	v.wrapMu.RLock()
	defer v.wrapMu.RUnlock()
	var out *TenantBootstrap
	err = v.update(ctx, func(t *txn) error {
		c, err := tenants.Create(t.Tx, v.apps, tenants.New{ID: tid, OwnerID: uid, MemberID: mid, AppID: aid,
			Name: req.Name, AppName: appName, Owner: req.Owner, Keys: keys, APIKey: apiKey})
		if err != nil {
			return err
		}
		out = &TenantBootstrap{Tenant: tenantOf(c.Tenant), Owner: c.Owner, Application: *applicationOf(c.Application)}
		out.Application.Key = Credential(apiKey)
		return nil
	})
	if err != nil {
		return nil, err
	}
	v.barrier.CacheKeys(tid, keys)
	return out, nil
}

// GetTenant returns the caller's tenant. Requires tenant:read.
//
// Returns Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without tenant:read, or
// Internal.
func (v *Vault) GetTenant(ctx context.Context, key Credential) (*Tenant, error) {
	var out Tenant
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTenantRead)
		if err != nil {
			return err
		}
		rec, err := tenants.Get(t.Tx, p.TenantID)
		if err != nil {
			return err
		}
		out = tenantOf(rec)
		return t.logRead(p, EntityTenant, p.TenantID, "Tenant read")
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// HasTenants reports whether the store holds any tenant: a host program
// bootstraps its first tenant when it holds none.
//
// Returns Internal when the store cannot be read.
func (v *Vault) HasTenants(ctx context.Context) (bool, error) {
	found := false
	err := v.view(ctx, func(t *txn) error {
		var err error
		found, err = tenants.Any(t.Tx)
		return err
	})
	return found, err
}

// ListTenants returns one page of the tenants, ordered by id (which is
// creation order), with a cursor as every list has. Tenants being deleted
// are not listed. It takes no key: it is an operator operation, like
// CreateTenant, and is not written to the tenants' audit logs.
//
// A page walks the tenant registry from its cursor and reads the records
// of the tenants it shows, whatever the number of tenants; a page number
// costs its offset, so (page-1)*size above 10,000 is Invalid naming page
// (use the cursor). total_items is the count of tenants kept by the
// commits that create and delete them (tenants.Registered): the whole list,
// on a cursor page too.
//
// Returns Invalid for a bad page request, or Internal.
func (v *Vault) ListTenants(ctx context.Context, req PageRequest) (*Page[Tenant], error) {
	pg, err := req.Resolve(MaxPageSize)
	if err != nil {
		return nil, err
	}
	var out *Page[Tenant]
	err = v.view(ctx, func(t *txn) error {
		recs, err := tenants.List(t.Tx, pg)
		if err != nil {
			return err
		}
		out = &Page[Tenant]{Pagination: recs.Pagination, Data: make([]Tenant, len(recs.Data))}
		for i := range recs.Data {
			out.Data[i] = tenantOf(&recs.Data[i])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetTenantByID returns tenant id. It takes no key: it is an operator
// operation, like CreateTenant (a tenant's own keys read their tenant with
// GetTenant).
//
// Returns NotFound for an unknown id or a tenant being deleted, or
// Internal.
func (v *Vault) GetTenantByID(ctx context.Context, id string) (*Tenant, error) {
	var out Tenant
	err := v.view(ctx, func(t *txn) error {
		rec, err := tenants.GetRegistered(t.Tx, id)
		if err != nil {
			return err
		}
		out = tenantOf(rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// tenantRecordOf is the record of the API's tenant.
func tenantRecordOf(t *Tenant) *tenants.Record {
	return &tenants.Record{ID: t.ID, Name: t.Name, OwnerID: t.OwnerID, CreatedBy: t.CreatedBy,
		CreatedAt: t.CreatedAt, ModifiedBy: t.ModifiedBy, ModifiedAt: t.ModifiedAt, Purposes: t.Purposes}
}

// tenantOf is the tenant the API shows.
func tenantOf(r *tenants.Record) Tenant {
	return Tenant{ID: r.ID, Name: r.Name, OwnerID: r.OwnerID, CreatedBy: r.CreatedBy,
		CreatedAt: r.CreatedAt, ModifiedBy: r.ModifiedBy, ModifiedAt: r.ModifiedAt, Purposes: r.Purposes}
}
