package tokenvault

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Application holds an API key and what the key may do.
type Application struct {
	ID       string `json:"id"`
	TenantID string `json:"tenant_id"`
	Name     string `json:"name"`
	// Key is set only in the responses of create and regenerate: the Vault
	// stores a keyed hash of it, never the key.
	Key         Credential      `json:"key,omitempty"`
	Type        ApplicationType `json:"type"`
	Permissions []string        `json:"permissions"`
	Rules       []AccessRule    `json:"rules"`
	// ExpiresAt, when set, is the instant the application stops working
	// and is deleted.
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	CreatedBy  string     `json:"created_by,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	ModifiedBy string     `json:"modified_by,omitempty"`
	ModifiedAt *time.Time `json:"modified_at,omitempty"`
	// AllowedOrigins are the origins allowed to embed a public
	// application's hosted elements (package elements), as
	// scheme://host[:port] in lower case; absent for none.
	AllowedOrigins []string `json:"allowed_origins,omitempty"`
	// RevealBudget is the application's budget of reveals (see
	// [RevealBudget]); absent for none.
	RevealBudget *RevealBudget `json:"reveal_budget,omitempty"`
	// FrozenAt, when set, is when the circuit breaker on reveals froze
	// the application: its keys are refused (ErrKeyFrozen) until
	// UnfreezeApplication. FrozenReason says why: "reveal_budget" or
	// "decoy".
	FrozenAt     *time.Time `json:"frozen_at,omitempty"`
	FrozenReason string     `json:"frozen_reason,omitempty"`
}

// CreateApplicationRequest is the body of CreateApplication.
type CreateApplicationRequest struct {
	Name        string          `json:"name"`
	Type        ApplicationType `json:"type"`
	Permissions []string        `json:"permissions"`
	Rules       []AccessRule    `json:"rules"`
	// ExpiresAt, when set, must be in the future and before the year
	// 10000 in UTC.
	ExpiresAt *time.Time `json:"expires_at"`
	// AllowedOrigins, for a public application only, are the origins
	// allowed to embed its hosted elements: at most 20, each
	// scheme://host[:port] (http or https, no path, no wildcard),
	// normalized to lower case without a default port.
	AllowedOrigins []string `json:"allowed_origins,omitempty"`
	// RevealBudget, when set, bounds the distinct tokens the
	// application's keys may read revealed per window (see
	// [RevealBudget]).
	RevealBudget *RevealBudget `json:"reveal_budget,omitempty"`
}

// UpdateApplicationRequest is the body of UpdateApplication. The type of an
// application cannot change.
type UpdateApplicationRequest struct {
	Name        string       `json:"name"`
	Permissions []string     `json:"permissions"`
	Rules       []AccessRule `json:"rules"`
	// AllowedOrigins replaces a public application's allowed origins
	// (as in CreateApplicationRequest) when set; nil (absent) keeps them,
	// an empty list removes them.
	AllowedOrigins *[]string `json:"allowed_origins,omitempty"`
	// RevealBudget replaces the application's reveal budget when set; nil
	// (absent) keeps it, one of 0 tokens removes it.
	RevealBudget *RevealBudget `json:"reveal_budget,omitempty"`
}

// ListApplicationsRequest filters and pages ListApplications.
type ListApplicationsRequest struct {
	// IDs, when non-empty, keeps only these applications.
	IDs []string
	PageRequest
}

// applicationOf builds the API's Application from the record, without its key (the
// caller sets Key in the answers that show it): the one place the record's
// shape meets Application's (TestApplicationRecordFields holds both to
// it). The application's permissions, rules and times are the record's,
// not copies, as when the record embedded it.
func applicationOf(r *access.ApplicationRecord) *Application {
	a := &Application{
		ID:          r.ID,
		TenantID:    r.TenantID,
		Name:        r.Name,
		Type:        r.Type,
		Permissions: r.Permissions,
		Rules:       r.Rules,
		ExpiresAt:   r.ExpiresAt,
		CreatedBy:   r.CreatedBy,
		CreatedAt:   r.CreatedAt,
		ModifiedBy:  r.ModifiedBy,
		ModifiedAt:  r.ModifiedAt,

		AllowedOrigins: r.AllowedOrigins,
		RevealBudget:   r.RevealBudget,
	}
	if r.Frozen != nil {
		at := r.Frozen.At
		a.FrozenAt, a.FrozenReason = &at, r.Frozen.Reason
	}
	return a
}

// maxNameLength is the spec's limit on names of applications, reactors and
// proxies, in characters.
const maxNameLength = 200

func validateName(name string, fe unit.FieldErrors) {
	switch {
	case strings.TrimSpace(name) == "":
		fe.Add("name", "is required")
	case utf8.RuneCountInString(name) > maxNameLength:
		fe.Add("name", "must be at most %d characters", maxNameLength)
	default:
		unit.CheckNoControl("name", name, fe)
	}
}

// normalizeGrants copies a request's grants, absent lists made empty
// (access.NormalizeGrants).
func normalizeGrants(perms []string, rules []AccessRule) ([]string, []AccessRule) {
	return access.NormalizeGrants(perms, rules)
}

// CreateApplication creates an application and returns it with its key, the
// only time the key is shown besides RegenerateApplicationKey. Requires
// application:create; a management application can only be given
// permissions the caller holds itself.
//
// Returns Invalid (with fields) for a bad request, Unauthenticated,
// PermissionDenied.
func (v *Vault) CreateApplication(ctx context.Context, key Credential, req CreateApplicationRequest) (*Application, error) {
	fe := unit.FieldErrors{}
	validateName(req.Name, fe)
	perms, rules := normalizeGrants(req.Permissions, req.Rules)
	if !validApplicationType(req.Type) {
		fe.Add("type", "must be private, public or management")
	} else {
		validateGrants(req.Type, perms, rules, fe)
	}
	id, apiKey := v.ids.Next(v.now()), unit.NewAPIKey()
	var out *Application
	var pending *ApprovalRequired
	err := v.update(ctx, func(t *txn) error {
		pending = nil
		p, err := t.authorize(key, PermApplicationCreate)
		if err != nil {
			return err
		}
		if req.Type == Management {
			if pending, err = v.createNeedsApproval(t, p, id, string(apiKey), req, perms, rules, fe); err != nil || pending != nil {
				return err
			}
		}
		rec, err := v.apps.Create(t.Tx, p, id, apiKey, req.Type, access.Grant{Name: req.Name, Permissions: perms, Rules: rules, AllowedOrigins: &req.AllowedOrigins, RevealBudget: req.RevealBudget}, req.ExpiresAt, fe)
		if err != nil {
			return err
		}
		out = applicationOf(rec)
		out.Key = Credential(apiKey)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if pending != nil {
		return nil, pending
	}
	return out, nil
}

// GetApplication returns an application of the caller's tenant. Requires
// application:read. Returns NotFound for an unknown id or another tenant's
// application.
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) GetApplication(ctx context.Context, key Credential, id string) (*Application, error) {
	var out *Application
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermApplicationRead)
		if err != nil {
			return err
		}
		rec, err := access.MustApplication(t.Tx, p.TenantID, id)
		if err != nil {
			return err
		}
		out = applicationOf(rec)
		return t.logRead(p, EntityApplication, id, "Application read")
	})
	return out, err
}

// GetApplicationByKey returns the application the key belongs to. Requires
// application:read.
//
// Returns Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without application:read,
// or Internal.
func (v *Vault) GetApplicationByKey(ctx context.Context, key Credential) (*Application, error) {
	var out *Application
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermApplicationRead)
		if err != nil {
			return err
		}
		if p.ActorType != ActorApplication {
			return unit.NotFoundError("application")
		}
		rec, err := access.MustApplication(t.Tx, p.TenantID, p.ActorID)
		if err != nil {
			return err
		}
		out = applicationOf(rec)
		return t.logRead(p, EntityApplication, p.ActorID, "Application read by key")
	})
	return out, err
}

// ListApplications returns the applications of the caller's tenant, oldest
// first. Requires application:read. List reads are not logged.
//
// A page costs what it returns, as do the lists of reactors, proxies,
// members and invitations: it reads the records from its cursor in id
// order and stops when it is full, examining at most its offset, its size
// and 1,000 more records (an id or name filter may leave a page short,
// with an After that continues). (Page-1)*Size above 10,000 is Invalid,
// naming page: use Start. TotalItems is the tenant's kept count of the
// kind (an application past expires_at that the sweeper has not removed
// yet is counted), on a cursor page too; with a filter it is a lower
// bound: the items shown up to the end of the page, plus one when After
// is set.
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, and
// Internal.
func (v *Vault) ListApplications(ctx context.Context, key Credential, req ListApplicationsRequest) (*Page[Application], error) {
	pg, err := req.PageRequest.Resolve(MaxPageSize)
	if err != nil {
		return nil, err
	}
	if err := unit.CheckIDs("id", req.IDs); err != nil {
		return nil, err
	}
	var out *Page[Application]
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermApplicationRead)
		if err != nil {
			return err
		}
		recs, err := access.ListApplications(t.Tx, p.TenantID, pg, req.IDs)
		if err != nil {
			return err
		}
		out = &Page[Application]{Pagination: recs.Pagination, Data: make([]Application, len(recs.Data))}
		for i := range recs.Data {
			out.Data[i] = *applicationOf(&recs.Data[i])
		}
		return nil
	})
	return out, err
}

// UpdateApplication replaces the name, permissions and rules of an
// application. Requires application:update; a management application can
// only be given permissions the caller holds itself. Taking a management
// permission from the tenant's last full manager (a management application
// holding every management permission, without an expiry) is a Conflict:
// nobody could give it back.
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) UpdateApplication(ctx context.Context, key Credential, id string, req UpdateApplicationRequest) (*Application, error) {
	fe := unit.FieldErrors{}
	validateName(req.Name, fe)
	perms, rules := normalizeGrants(req.Permissions, req.Rules)
	var out *Application
	var pending *ApprovalRequired
	err := v.update(ctx, func(t *txn) error {
		pending = nil
		p, err := t.authorize(key, PermApplicationUpdate)
		if err != nil {
			return err
		}
		g := access.Grant{Name: req.Name, Permissions: perms, Rules: rules, AllowedOrigins: req.AllowedOrigins, RevealBudget: req.RevealBudget}
		if pending, err = v.updateNeedsApproval(t, p, id, g, fe); err != nil || pending != nil {
			return err
		}
		rec, err := v.apps.Replace(t.Tx, p, id, g, fe)
		if err != nil {
			return err
		}
		out = applicationOf(rec)
		return nil
	})
	if err == nil && pending != nil {
		return nil, pending
	}
	return out, err
}

// RegenerateApplicationKey gives an application a new key and returns it;
// the old key is refused from the moment this returns. Requires
// application:update, and for a management application every permission it
// holds.
//
// Returns NotFound for an application that is not the caller's tenant's,
// Unauthenticated for a key that is missing, unknown or expired, RateLimited
// over a rate limit, PermissionDenied without the permissions above,
// StorageFull, or Internal.
func (v *Vault) RegenerateApplicationKey(ctx context.Context, key Credential, id string) (*Application, error) {
	apiKey := unit.NewAPIKey()
	var out *Application
	var pending *ApprovalRequired
	err := v.update(ctx, func(t *txn) error {
		pending = nil
		p, err := t.authorize(key, PermApplicationUpdate)
		if err != nil {
			return err
		}
		if pending, err = v.regenerateNeedsApproval(t, p, id, string(apiKey)); err != nil || pending != nil {
			return err
		}
		rec, err := v.apps.Regenerate(t.Tx, p, id, apiKey)
		if err != nil {
			return err
		}
		out = applicationOf(rec)
		out.Key = Credential(apiKey)
		return nil
	})
	if err == nil && pending != nil {
		return nil, pending
	}
	return out, err
}

// DeleteApplication deletes an application; its key is refused from the
// moment this returns. Requires application:delete. Deleting the tenant's
// last full manager (a management application holding every management
// permission, without an expiry) is a Conflict: its powers would be lost;
// so is deleting an approver that the approval policy needs
// (docs/approvals.md).
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) DeleteApplication(ctx context.Context, key Credential, id string) error {
	return v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermApplicationDelete)
		if err != nil {
			return err
		}
		if err := keepsApprovers(t, p.TenantID, id); err != nil {
			return err
		}
		return v.apps.Delete(t.Tx, p, id)
	})
}
