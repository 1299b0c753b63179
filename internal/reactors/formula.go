package reactors

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Formulas: reactor code with the contract of its configuration and
// arguments, private to a tenant or official (registered by the host
// program, read by every tenant, changed by none). The root's Vault
// methods authorize, log and store; this file checks requests, makes and
// loads formulas, and orders them for a list.

// Formula types.
const (
	// FormulaPrivate formulas belong to one tenant.
	FormulaPrivate = "private"
	// FormulaOfficial formulas are registered by the host program with
	// RegisterOfficialFormula and visible to every tenant, read-only.
	FormulaOfficial = "official"
)

// Formula is reactor code with the contract of its configuration and
// arguments (the root's Formula).
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

// FormulaRequest is the body of CreateFormula, UpdateFormula and
// RegisterOfficialFormula (the root's FormulaRequest).
type FormulaRequest struct {
	Name              string                     `json:"name"`
	Description       string                     `json:"description"`
	Type              string                     `json:"type,omitempty"`
	Code              string                     `json:"code"`
	Configuration     []ConfigurationDeclaration `json:"configuration"`
	RequestParameters []RequestParameter         `json:"request_parameters"`
}

// CheckFormula checks req but for its code, which the sandbox checks once
// the caller is authorized (Code.Check), and fills in its type (wantType:
// a caller may only restate it) and empty declarations. checkName holds
// the name to the rule of every named object's. Returns Invalid with the
// fields.
func CheckFormula(req *FormulaRequest, wantType string, checkName func(name string, fe unit.FieldErrors)) error {
	fe := unit.FieldErrors{}
	checkName(req.Name, fe)
	if len(req.Description) > 1000 {
		fe.Add("description", "must be at most 1000 characters")
	}
	if req.Type != "" && req.Type != wantType {
		fe.Add("type", "must be %s", wantType)
	}
	CheckDeclarations(req.Configuration, req.RequestParameters, fe, unit.CheckNoControl)
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

// NewFormula is the formula req (checked by CheckFormula) makes, of
// tenant tid ("" for an official one), created by by at now.
func NewFormula(req *FormulaRequest, id, tid string, by unit.Actor, now time.Time) *Formula {
	return &Formula{
		ID: id, TenantID: tid, Name: req.Name, Description: req.Description, Type: req.Type, Code: req.Code,
		Configuration: req.Configuration, RequestParameters: req.RequestParameters,
		CreatedBy: by.ID, CreatedAt: now,
	}
}

// LoadFormula returns tenant tid's formula or an official one, or nil.
func LoadFormula(t *unit.Tx, tid, id string) (*Formula, error) {
	if !unit.ValidID(id) {
		return nil, nil
	}
	var f FormulaRecord
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntityReactorFormula, id), &f)
	if err == nil && !ok {
		ok, err = t.GetRecord(barrier.OfficialFormula(id), &f)
	}
	if err != nil || !ok {
		return nil, err
	}
	return FormulaOf(&f), nil
}

// MustFormula is LoadFormula, NotFound for no formula.
func MustFormula(t *unit.Tx, tid, id string) (*Formula, error) {
	f, err := LoadFormula(t, tid, id)
	if err == nil && f == nil {
		err = unit.NotFoundError("formula")
	}
	return f, err
}

// MustOwnFormula loads a private formula of tid for a change: NotFound
// for none, PermissionDenied for an official one.
func MustOwnFormula(t *unit.Tx, tid, id string) (*Formula, error) {
	f, err := MustFormula(t, tid, id)
	if err != nil {
		return nil, err
	}
	if f.Type == FormulaOfficial {
		return nil, unit.Errorf(unit.PermissionDenied, "official formulas are managed by the host program")
	}
	return f, nil
}

// Formulas returns the official formulas and tenant tid's, in store
// order; FormulaPosition orders them for a list.
func Formulas(t *unit.Tx, tid string) ([]Formula, error) {
	var all []Formula
	for _, prefix := range []barrier.Prefix{barrier.OfficialFormulas, barrier.Tenant(tid).Records(unit.EntityReactorFormula)} {
		raws, err := t.ScanValues(prefix)
		if err != nil {
			return nil, err
		}
		for _, kv := range raws {
			var f FormulaRecord
			if err := t.OpenRecord(kv.Key, kv.Raw, &f); err != nil {
				return nil, err
			}
			all = append(all, *FormulaOf(&f))
		}
	}
	return all, nil
}

// FormulaPosition orders the official formulas before the tenant's, each
// by id.
func FormulaPosition(f Formula) string {
	if f.Type == FormulaOfficial {
		return "0/" + f.ID
	}
	return "1/" + f.ID
}

// FormulaRecordOf is the record of the API's formula.
func FormulaRecordOf(f *Formula) *FormulaRecord {
	return &FormulaRecord{ID: f.ID, TenantID: f.TenantID, Name: f.Name, Description: f.Description, Type: f.Type,
		Code: f.Code, Configuration: f.Configuration, RequestParameters: f.RequestParameters,
		CreatedBy: f.CreatedBy, CreatedAt: f.CreatedAt, ModifiedBy: f.ModifiedBy, ModifiedAt: f.ModifiedAt}
}

// FormulaOf is the formula the API shows.
func FormulaOf(r *FormulaRecord) *Formula {
	return &Formula{ID: r.ID, TenantID: r.TenantID, Name: r.Name, Description: r.Description, Type: r.Type,
		Code: r.Code, Configuration: r.Configuration, RequestParameters: r.RequestParameters,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, ModifiedBy: r.ModifiedBy, ModifiedAt: r.ModifiedAt}
}
