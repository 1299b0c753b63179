package tokenvault

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tokenvault/tokenvault/internal/jsonpatch"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/reactors"
	"github.com/tokenvault/tokenvault/internal/sandbox"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Reactor is a configured formula (or code of its own) that a key holding
// token:use can invoke with detokenized arguments.
type Reactor = reactors.Reactor

// Ref names another resource by id.
type Ref = reactors.Ref

// CreateReactorRequest is the body of CreateReactor: a formula or code of
// its own, not both.
type CreateReactorRequest struct {
	Name          string         `json:"name"`
	Configuration map[string]any `json:"configuration"`
	Formula       *Ref           `json:"formula,omitempty"`
	Code          string         `json:"code,omitempty"`
	Application   *Ref           `json:"application,omitempty"`
}

// UpdateReactorRequest is the body of UpdateReactor (PUT). The formula of a
// reactor cannot change; a reactor with code of its own may replace it.
type UpdateReactorRequest struct {
	Name          string         `json:"name"`
	Configuration map[string]any `json:"configuration"`
	Code          string         `json:"code,omitempty"`
	Application   *Ref           `json:"application,omitempty"`
}

// CreateReactor creates a reactor. Requires reactor:create. Returns Invalid
// with the field named for a bad name, configuration, formula or
// application.
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) CreateReactor(ctx context.Context, key Credential, req CreateReactorRequest) (*Reactor, error) {
	fe := unit.FieldErrors{}
	validateName(req.Name, fe)
	conf, err := reactors.NormalizeConfiguration(req.Configuration)
	if err != nil {
		return nil, err
	}
	switch {
	case req.Formula == nil && req.Code == "":
		fe.Add("formula.id", "is required (or code)")
	case req.Formula != nil && req.Code != "":
		fe.Add("code", "a reactor runs its formula's code or its own, not both")
	case req.Formula != nil && !unit.ValidID(req.Formula.ID):
		fe.Add("formula.id", "must be a UUID")
	}
	if conf == nil {
		if req.Formula != nil {
			fe.Add("configuration", "is required")
		}
		conf = map[string]any{}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	var out *Reactor
	err = v.updateChecked(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermReactorCreate)
		if err != nil {
			return err
		}
		if req.Code != "" {
			if err := t.checkCode(p.TenantID, req.Code, "code"); err != nil {
				return err
			}
		}
		rec := &reactors.Record{
			ID: t.v.ids.Next(t.Now), TenantID: p.TenantID, Name: req.Name, Code: req.Code,
			Configuration: conf, CreatedBy: p.ActorID, CreatedAt: t.Now,
		}
		fe := unit.FieldErrors{}
		var f *Formula
		if req.Formula != nil {
			rec.FormulaID = req.Formula.ID
			if f, err = reactors.LoadFormula(t.Tx, p.TenantID, req.Formula.ID); err != nil {
				return err
			}
			if f == nil {
				fe.Add("formula.id", "no such formula")
			}
		}
		reactors.CheckFormulaConfiguration(f, conf, fe)
		if err := reactors.CheckApplication(t.Tx, p.TenantID, req.Application, "", fe); err != nil {
			return err
		}
		if err := fe.Err(); err != nil {
			return err
		}
		if req.Application != nil {
			rec.ApplicationID = req.Application.ID
		}
		if err := reactors.PutReactor(t.Tx, rec); err != nil {
			return err
		}
		out = reactors.ReactorOf(rec, f)
		if err := reactors.EmitReactor(t.Tx, EventReactorCreated, p.Actor(), out); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, EntityReactor, rec.ID, OpCreate, fmt.Sprintf("Reactor %q created", rec.Name))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetReactor returns a reactor of the caller's tenant. Requires
// reactor:read.
//
// Returns NotFound for a reactor that is not the caller's tenant's,
// Unauthenticated for a key that is missing, unknown or expired, RateLimited
// over a rate limit, PermissionDenied without reactor:read, or Internal.
func (v *Vault) GetReactor(ctx context.Context, key Credential, id string) (*Reactor, error) {
	var out *Reactor
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermReactorRead)
		if err != nil {
			return err
		}
		rec, f, err := reactors.MustReactor(t.Tx, p.TenantID, id)
		if err != nil {
			return err
		}
		out = reactors.ReactorOf(rec, f)
		return t.logRead(p, EntityReactor, id, "Reactor read")
	})
	return out, err
}

// ListReactorsRequest filters and pages ListReactors.
type ListReactorsRequest struct {
	// IDs, when non-empty, keeps only these reactors.
	IDs []string
	// Name, when set, keeps reactors whose name matches it, ignoring case:
	// * matches any run of characters and ? one character; a name without
	// either matches as a substring.
	Name string
	PageRequest
}

// ListReactors returns the reactors of the caller's tenant, oldest first.
// Requires reactor:read.
//
// Returns Invalid for a page or size out of range or a bad cursor,
// Unauthenticated for a key that is missing, unknown or expired, RateLimited
// over a rate limit, PermissionDenied without reactor:read, or Internal.
func (v *Vault) ListReactors(ctx context.Context, key Credential, req ListReactorsRequest) (*Page[Reactor], error) {
	pg, err := req.PageRequest.Resolve(MaxPageSize)
	if err != nil {
		return nil, err
	}
	if err := unit.CheckIDs("id", req.IDs); err != nil {
		return nil, err
	}
	var out *Page[Reactor]
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermReactorRead)
		if err != nil {
			return err
		}
		out, err = reactors.ListReactors(t.Tx, p.TenantID, pg, reactors.ListFilter{IDs: req.IDs, Name: req.Name})
		return err
	})
	return out, err
}

// UpdateReactor replaces a reactor's name, configuration, application and
// (for a reactor with code of its own) code. Requires reactor:update.
//
// Returns Invalid or Unprocessable for a request or code that fails its
// checks (naming the field), NotFound for a reactor or application that is
// not the caller's tenant's, Unauthenticated for a key that is missing,
// unknown or expired, RateLimited over a rate limit, PermissionDenied
// without reactor:update, Unavailable when no sandbox worker checks the code
// in time, StorageFull, or Internal.
func (v *Vault) UpdateReactor(ctx context.Context, key Credential, id string, req UpdateReactorRequest) (*Reactor, error) {
	return v.changeReactor(ctx, key, id, func(*reactors.Record) (UpdateReactorRequest, error) { return req, nil }, "updated")
}

// PatchReactor applies an RFC 7386 merge patch to a reactor's name,
// configuration (merged key by key; null removes), application (null
// removes) and code. Requires reactor:update.
//
// Returns Invalid for a patch that is not a JSON object or fields that fail
// their checks, Unprocessable for code that fails its check, NotFound for a
// reactor or application that is not the caller's tenant's, Unauthenticated
// for a key that is missing, unknown or expired, RateLimited over a rate
// limit, PermissionDenied without reactor:update, Unavailable when no
// sandbox worker checks the code in time, StorageFull, or Internal.
func (v *Vault) PatchReactor(ctx context.Context, key Credential, id string, patch json.RawMessage) error {
	fields, err := jsonpatch.Decode(patch, "reactor", "name", "configuration", "application", "code")
	if err != nil {
		return err
	}
	_, err = v.changeReactor(ctx, key, id, func(rec *reactors.Record) (UpdateReactorRequest, error) {
		cur := UpdateReactorRequest{Name: rec.Name, Configuration: rec.Configuration, Code: rec.Code}
		if rec.ApplicationID != "" {
			cur.Application = &Ref{ID: rec.ApplicationID}
		}
		var req UpdateReactorRequest
		return req, jsonpatch.Apply(cur, fields, &req)
	}, "patched")
	return err
}

// changeReactor validates and writes the request next returns for the
// stored reactor.
func (v *Vault) changeReactor(ctx context.Context, key Credential, id string, next func(*reactors.Record) (UpdateReactorRequest, error), verb string) (*Reactor, error) {
	var out *Reactor
	err := v.updateChecked(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermReactorUpdate)
		if err != nil {
			return err
		}
		rec, f, err := reactors.MustReactor(t.Tx, p.TenantID, id)
		if err != nil {
			return err
		}
		req, err := next(rec)
		if err != nil {
			return err
		}
		fe := unit.FieldErrors{}
		validateName(req.Name, fe)
		conf, err := reactors.NormalizeConfiguration(req.Configuration)
		if err != nil {
			return err
		}
		switch {
		case conf == nil && f != nil:
			fe.Add("configuration", "is required")
		case conf == nil:
			conf = map[string]any{}
		}
		switch {
		case f != nil && req.Code != "":
			fe.Add("code", "this reactor runs its formula's code")
		case f == nil && req.Code == "":
			fe.Add("code", "is required for a reactor without a formula")
		}
		// A configuration the update keeps is not checked again: its
		// formula may have been replaced since with other
		// declarations, and the reactor must stay editable (a rename
		// must not need a new configuration). A changed one must
		// satisfy the formula as it is now.
		if !reactors.SameJSON(conf, rec.Configuration) {
			reactors.CheckFormulaConfiguration(f, conf, fe)
		}
		if err := reactors.CheckApplication(t.Tx, p.TenantID, req.Application, rec.ApplicationID, fe); err != nil {
			return err
		}
		if err := fe.Err(); err != nil {
			return err
		}
		if req.Code != "" {
			if err := t.checkCode(p.TenantID, req.Code, "code"); err != nil {
				return err
			}
		}
		rec.Name, rec.Configuration, rec.Code = req.Name, conf, req.Code
		rec.ApplicationID = ""
		if req.Application != nil {
			rec.ApplicationID = req.Application.ID
		}
		now := t.Now
		rec.ModifiedBy, rec.ModifiedAt = p.ActorID, &now
		if err := reactors.PutReactor(t.Tx, rec); err != nil {
			return err
		}
		out = reactors.ReactorOf(rec, f)
		if err := reactors.EmitReactor(t.Tx, EventReactorUpdated, p.Actor(), out); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, EntityReactor, id, OpUpdate, fmt.Sprintf("Reactor %q %s", rec.Name, verb))
	})
	return out, err
}

// DeleteReactor deletes a reactor. Requires reactor:delete.
//
// Returns NotFound for a reactor that is not the caller's tenant's,
// Unauthenticated for a key that is missing, unknown or expired, RateLimited
// over a rate limit, PermissionDenied without reactor:delete, StorageFull,
// or Internal.
func (v *Vault) DeleteReactor(ctx context.Context, key Credential, id string) error {
	return v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermReactorDelete)
		if err != nil {
			return err
		}
		rec, f, err := reactors.MustReactor(t.Tx, p.TenantID, id)
		if err != nil {
			return err
		}
		if err := reactors.DeleteReactor(t.Tx, p.TenantID, id); err != nil {
			return err
		}
		if err := reactors.EmitReactor(t.Tx, EventReactorDeleted, p.Actor(), reactors.ReactorOf(rec, f)); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, EntityReactor, id, OpDelete, "Reactor deleted")
	})
}

// Tenant code (reactors, formulas, proxy transforms) runs in sandbox worker
// processes (internal/sandbox) through reactors.Code: every check of code
// when it is saved and every run, synchronous or not.

// Limits on the fetch calls of one invocation. The worker asks; the Vault
// carries the request out through the outbound policy of proxies.
const (
	MaxFetchesPerInvocation = reactors.MaxFetchesPerInvocation
	MaxFetchRequestBytes    = reactors.MaxFetchRequestBytes
	MaxFetchResponseBytes   = reactors.MaxFetchResponseBytes
)

// DefaultCodeMaxResultBytes is Options.Code.MaxResultBytes when zero: what
// one run of tenant code may give back, as JSON.
const DefaultCodeMaxResultBytes = sandbox.DefaultMaxResultBytes

// sandboxCode is the checking and running of tenant code
// (internal/reactors) over the Vault's sandbox, outbound client and
// result limit. It is a few words, built where it is used.
func (v *Vault) sandboxCode() *reactors.Code {
	return &reactors.Code{Sandbox: v.code, HTTPClient: v.httpClient, MaxResultBytes: v.codeMaxResult}
}

// checkCode, inside a transaction of updateChecked, is the outcome of
// checking code for tenant, explained on field (reactors.Code.CheckIn).
func (t *txn) checkCode(tenant, code, field string) error {
	return t.v.sandboxCode().CheckIn(t.Tx, tenant, code, field)
}

// updateChecked is update for writes that save code: a transaction that
// meets code not yet checked ends, the code is checked in a worker with
// no transaction open, and the transaction runs again
// (reactors.Code.UpdateChecked).
func (v *Vault) updateChecked(ctx context.Context, fn func(*txn) error) error {
	return v.sandboxCode().UpdateChecked(ctx, func(seen func(*unit.Tx)) error {
		return v.update(ctx, func(t *txn) error {
			err := fn(t)
			seen(t.Tx)
			return err
		})
	})
}

// Formula types.
const (
	// FormulaPrivate formulas belong to one tenant.
	FormulaPrivate = reactors.FormulaPrivate
	// FormulaOfficial formulas are registered by the host program with
	// RegisterOfficialFormula and visible to every tenant, read-only.
	FormulaOfficial = reactors.FormulaOfficial
)

// Value types of configuration declarations and request parameters.
const (
	TypeString  = reactors.TypeString
	TypeNumber  = reactors.TypeNumber
	TypeBoolean = reactors.TypeBoolean
)

// Formula is reactor code with the contract of its configuration and
// arguments.
type Formula = reactors.Formula

// ConfigurationDeclaration declares one configuration name.
type ConfigurationDeclaration = reactors.ConfigurationDeclaration

// RequestParameter declares one argument of an invocation. A dotted name
// (a.b.c) addresses a nested property.
type RequestParameter = reactors.RequestParameter

// FormulaRequest is the body of CreateFormula, UpdateFormula and
// RegisterOfficialFormula.
type FormulaRequest = reactors.FormulaRequest

// RegisterOfficialFormula adds a formula every tenant can read and
// configure reactors with, and none can change. It takes no key: it is how
// a host program ships formulas.
//
// Returns Invalid or Unprocessable for a request or code that fails its
// checks, Unavailable when no sandbox worker checks the code in time,
// StorageFull, or Internal.
func (v *Vault) RegisterOfficialFormula(ctx context.Context, req FormulaRequest) (*Formula, error) {
	if err := reactors.CheckFormula(&req, FormulaOfficial, validateName); err != nil {
		return nil, err
	}
	now := v.now().UTC()
	f := reactors.NewFormula(&req, v.ids.Next(now), "", actor{Type: ActorSystem}, now)
	err := v.updateChecked(ctx, func(t *txn) error {
		if err := t.checkCode("", req.Code, "code"); err != nil {
			return err
		}
		return reactors.PutFormula(t.Tx, f)
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// CreateFormula creates a private formula of the caller's tenant. Requires
// reactor:create. Returns Invalid (with the line of a syntax error),
// Unprocessable (code that does not export a function).
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) CreateFormula(ctx context.Context, key Credential, req FormulaRequest) (*Formula, error) {
	if err := reactors.CheckFormula(&req, FormulaPrivate, validateName); err != nil {
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
		out = reactors.NewFormula(&req, t.v.ids.Next(t.Now), p.TenantID, p.Actor(), t.Now)
		if err := reactors.PutFormula(t.Tx, out); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, EntityReactorFormula, out.ID, OpCreate, fmt.Sprintf("Formula %q created", out.Name))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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
		if out, err = reactors.MustFormula(t.Tx, p.TenantID, id); err != nil {
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
		all, err := reactors.Formulas(t.Tx, p.TenantID)
		if err != nil {
			return err
		}
		out = paging.Paginate(all, pg, reactors.FormulaPosition)
		return nil
	})
	return out, err
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
	if err := reactors.CheckFormula(&req, FormulaPrivate, validateName); err != nil {
		return nil, err
	}
	var out *Formula
	err := v.updateChecked(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermReactorUpdate)
		if err != nil {
			return err
		}
		old, err := reactors.MustOwnFormula(t.Tx, p.TenantID, id)
		if err != nil {
			return err
		}
		if err := t.checkCode(p.TenantID, req.Code, "code"); err != nil {
			return err
		}
		out = reactors.NewFormula(&req, id, p.TenantID, actor{ID: old.CreatedBy}, old.CreatedAt)
		now := t.Now
		out.ModifiedBy, out.ModifiedAt = p.ActorID, &now
		if err := reactors.PutFormula(t.Tx, out); err != nil {
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
		if _, err := reactors.MustOwnFormula(t.Tx, p.TenantID, id); err != nil {
			return err
		}
		all, err := reactors.Reactors(t.Tx, p.TenantID)
		if err != nil {
			return err
		}
		for _, r := range all {
			if r.FormulaID == id {
				return unit.Errorf(Conflict, "reactor %s uses the formula", r.ID)
			}
		}
		if err := reactors.DeleteFormula(t.Tx, p.TenantID, id); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, EntityReactorFormula, id, OpDelete, "Formula deleted")
	})
}
