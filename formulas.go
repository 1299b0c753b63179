package tokenvault

import (
	"context"
	"fmt"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/reactors"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Formula types.
const (
	// FormulaPrivate formulas belong to one tenant.
	FormulaPrivate = "private"
	// FormulaOfficial formulas are registered by the host program with
	// RegisterOfficialFormula and visible to every tenant, read-only.
	FormulaOfficial = "official"
)

// Value types of configuration declarations and request parameters.
const (
	TypeString  = reactors.TypeString
	TypeNumber  = reactors.TypeNumber
	TypeBoolean = reactors.TypeBoolean
)

// Formula is reactor code with the contract of its configuration and
// arguments.
type Formula struct {
	ID          string `json:"id"`
	TenantID    string `json:"tenant_id,omitempty"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Type is private or official.
	Type string `json:"type"`
	// Code is a Node-style module: module.exports = async function (req) {...}.
	Code string `json:"code"`
	// Configuration declares the names and types a reactor's configuration
	// must have: every declared name, nothing else.
	Configuration []ConfigurationDeclaration `json:"configuration"`
	// RequestParameters declare the arguments of an invocation.
	RequestParameters []RequestParameter `json:"request_parameters"`
	CreatedBy         string             `json:"created_by,omitempty"`
	CreatedAt         time.Time          `json:"created_at"`
	ModifiedBy        string             `json:"modified_by,omitempty"`
	ModifiedAt        *time.Time         `json:"modified_at,omitempty"`
}

// ConfigurationDeclaration declares one configuration name.
type ConfigurationDeclaration = reactors.ConfigurationDeclaration

// RequestParameter declares one argument of an invocation. A dotted name
// (a.b.c) addresses a nested property.
type RequestParameter = reactors.RequestParameter

// FormulaRequest is the body of CreateFormula, UpdateFormula and
// RegisterOfficialFormula.
type FormulaRequest struct {
	Name              string                     `json:"name"`
	Description       string                     `json:"description"`
	Type              string                     `json:"type,omitempty"`
	Code              string                     `json:"code"`
	Configuration     []ConfigurationDeclaration `json:"configuration"`
	RequestParameters []RequestParameter         `json:"request_parameters"`
}

// validateFormula checks req but for its code, which checkCode checks
// once the caller is authorized.
func (v *Vault) validateFormula(req *FormulaRequest, wantType string) error {
	fe := unit.FieldErrors{}
	validateName(req.Name, fe)
	if len(req.Description) > 1000 {
		fe.Add("description", "must be at most 1000 characters")
	}
	if req.Type != "" && req.Type != wantType {
		fe.Add("type", "must be %s", wantType)
	}
	reactors.CheckDeclarations(req.Configuration, req.RequestParameters, fe, unit.CheckNoControl)
	if req.Code == "" {
		fe.Add("code", "is required")
	}
	if err := fe.Err(); err != nil {
		return err
	}
	req.Type = wantType
	if req.Configuration == nil {
		req.Configuration = []ConfigurationDeclaration{}
	}
	if req.RequestParameters == nil {
		req.RequestParameters = []RequestParameter{}
	}
	return nil
}

// RegisterOfficialFormula adds a formula every tenant can read and
// configure reactors with, and none can change. It takes no key: it is how
// a host program ships formulas.
//
// Returns Invalid or Unprocessable for a request or code that fails its
// checks, Unavailable when no sandbox worker checks the code in time,
// StorageFull, or Internal.
func (v *Vault) RegisterOfficialFormula(ctx context.Context, req FormulaRequest) (*Formula, error) {
	if err := v.validateFormula(&req, FormulaOfficial); err != nil {
		return nil, err
	}
	now := v.now().UTC()
	f := req.formula(v.ids.Next(now), "", actor{Type: ActorSystem}, now)
	err := v.updateChecked(ctx, func(t *txn) error {
		if err := t.checkCode("", req.Code, "code"); err != nil {
			return err
		}
		return t.PutRecord(barrier.OfficialFormula(f.ID), formulaRecordOf(f))
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (req *FormulaRequest) formula(id, tid string, by actor, now time.Time) *Formula {
	return &Formula{
		ID: id, TenantID: tid, Name: req.Name, Description: req.Description, Type: req.Type, Code: req.Code,
		Configuration: req.Configuration, RequestParameters: req.RequestParameters,
		CreatedBy: by.ID, CreatedAt: now,
	}
}

// CreateFormula creates a private formula of the caller's tenant. Requires
// reactor:create. Returns Invalid (with the line of a syntax error),
// Unprocessable (code that does not export a function).
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) CreateFormula(ctx context.Context, key Credential, req FormulaRequest) (*Formula, error) {
	if err := v.validateFormula(&req, FormulaPrivate); err != nil {
		return nil, err
	}
	var out *Formula
	err := v.updateChecked(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermReactorCreate)
		if err != nil {
			return err
		}
		if err := t.checkCode(p.TenantID, req.Code, "code"); err != nil {
			return err
		}
		out = req.formula(t.v.ids.Next(t.Now), p.TenantID, p.Actor(), t.Now)
		if err := t.PutRecord(barrier.Tenant(p.TenantID).Record(EntityReactorFormula, out.ID), formulaRecordOf(out)); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, EntityReactorFormula, out.ID, OpCreate, fmt.Sprintf("Formula %q created", out.Name))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// loadFormula returns the tenant's formula or an official one, or nil.
func (t *txn) loadFormula(tid, id string) (*Formula, error) {
	if !unit.ValidID(id) {
		return nil, nil
	}
	var f reactors.FormulaRecord
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(EntityReactorFormula, id), &f)
	if err == nil && !ok {
		ok, err = t.GetRecord(barrier.OfficialFormula(id), &f)
	}
	if err != nil || !ok {
		return nil, err
	}
	return formulaOf(&f), nil
}

func (t *txn) mustFormula(tid, id string) (*Formula, error) {
	f, err := t.loadFormula(tid, id)
	if err == nil && f == nil {
		err = unit.NotFoundError("formula")
	}
	return f, err
}

// GetFormula returns a formula of the caller's tenant or an official one.
// Requires reactor:read.
//
// Returns NotFound for a formula that is neither official nor the caller's
// tenant's, Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without reactor:read, or
// Internal.
func (v *Vault) GetFormula(ctx context.Context, key Credential, id string) (*Formula, error) {
	var out *Formula
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermReactorRead)
		if err != nil {
			return err
		}
		if out, err = t.mustFormula(p.TenantID, id); err != nil {
			return err
		}
		return t.logRead(p, EntityReactorFormula, id, "Formula read")
	})
	return out, err
}

// ListFormulasRequest pages ListFormulas.
type ListFormulasRequest struct {
	PageRequest
}

// formulaPosition orders the official formulas before the tenant's, each by
// id.
func formulaPosition(f Formula) string {
	if f.Type == FormulaOfficial {
		return "0/" + f.ID
	}
	return "1/" + f.ID
}

// ListFormulas returns the official formulas, then the caller's tenant's,
// oldest first. Requires reactor:read.
//
// Returns Invalid for a page or size out of range or a bad cursor,
// Unauthenticated for a key that is missing, unknown or expired, RateLimited
// over a rate limit, PermissionDenied without reactor:read, or Internal.
func (v *Vault) ListFormulas(ctx context.Context, key Credential, req ListFormulasRequest) (*Page[Formula], error) {
	pg, err := req.PageRequest.Resolve(MaxPageSize)
	if err != nil {
		return nil, err
	}
	var out *Page[Formula]
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermReactorRead)
		if err != nil {
			return err
		}
		var all []Formula
		for _, prefix := range []barrier.Prefix{barrier.OfficialFormulas, barrier.Tenant(p.TenantID).Records(EntityReactorFormula)} {
			raws, err := t.ScanValues(prefix)
			if err != nil {
				return err
			}
			for _, kv := range raws {
				var f reactors.FormulaRecord
				if err := t.OpenRecord(kv.Key, kv.Raw, &f); err != nil {
					return err
				}
				all = append(all, *formulaOf(&f))
			}
		}
		out = paging.Paginate(all, pg, formulaPosition)
		return nil
	})
	return out, err
}

// mustOwnFormula loads a private formula of tid for a change; official
// formulas are PermissionDenied.
func (t *txn) mustOwnFormula(tid, id string) (*Formula, error) {
	f, err := t.mustFormula(tid, id)
	if err != nil {
		return nil, err
	}
	if f.Type == FormulaOfficial {
		return nil, unit.Errorf(PermissionDenied, "official formulas are managed by the host program")
	}
	return f, nil
}

// UpdateFormula replaces a private formula. Reactors configured with it use
// the new code from their next invocation. Requires reactor:update.
//
// Returns Invalid or Unprocessable for a request or code that fails its
// checks, NotFound for a formula that is neither the caller's tenant's nor
// official, Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without reactor:update or
// for an official formula (the host manages those), Unavailable when no sandbox
// worker checks the code in time, StorageFull, or Internal.
func (v *Vault) UpdateFormula(ctx context.Context, key Credential, id string, req FormulaRequest) (*Formula, error) {
	if err := v.validateFormula(&req, FormulaPrivate); err != nil {
		return nil, err
	}
	var out *Formula
	err := v.updateChecked(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermReactorUpdate)
		if err != nil {
			return err
		}
		old, err := t.mustOwnFormula(p.TenantID, id)
		if err != nil {
			return err
		}
		if err := t.checkCode(p.TenantID, req.Code, "code"); err != nil {
			return err
		}
		out = req.formula(id, p.TenantID, actor{ID: old.CreatedBy}, old.CreatedAt)
		now := t.Now
		out.ModifiedBy, out.ModifiedAt = p.ActorID, &now
		if err := t.PutRecord(barrier.Tenant(p.TenantID).Record(EntityReactorFormula, id), formulaRecordOf(out)); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, EntityReactorFormula, id, OpUpdate, fmt.Sprintf("Formula %q updated", out.Name))
	})
	return out, err
}

// DeleteFormula deletes a private formula that no reactor uses (Conflict
// otherwise). Requires reactor:delete.
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) DeleteFormula(ctx context.Context, key Credential, id string) error {
	return v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermReactorDelete)
		if err != nil {
			return err
		}
		if _, err := t.mustOwnFormula(p.TenantID, id); err != nil {
			return err
		}
		reactors, err := t.reactors(p.TenantID)
		if err != nil {
			return err
		}
		for _, r := range reactors {
			if r.FormulaID == id {
				return unit.Errorf(Conflict, "reactor %s uses the formula", r.ID)
			}
		}
		if err := t.Delete(barrier.Tenant(p.TenantID).Record(EntityReactorFormula, id)); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, EntityReactorFormula, id, OpDelete, "Formula deleted")
	})
}

// formulaRecordOf is the record of the API's formula.
func formulaRecordOf(f *Formula) *reactors.FormulaRecord {
	return &reactors.FormulaRecord{ID: f.ID, TenantID: f.TenantID, Name: f.Name, Description: f.Description, Type: f.Type,
		Code: f.Code, Configuration: f.Configuration, RequestParameters: f.RequestParameters,
		CreatedBy: f.CreatedBy, CreatedAt: f.CreatedAt, ModifiedBy: f.ModifiedBy, ModifiedAt: f.ModifiedAt}
}

// formulaOf is the formula the API shows.
func formulaOf(r *reactors.FormulaRecord) *Formula {
	return &Formula{ID: r.ID, TenantID: r.TenantID, Name: r.Name, Description: r.Description, Type: r.Type,
		Code: r.Code, Configuration: r.Configuration, RequestParameters: r.RequestParameters,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, ModifiedBy: r.ModifiedBy, ModifiedAt: r.ModifiedAt}
}
