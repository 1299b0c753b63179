package reactors

import (
	"bytes"
	"encoding/json"
	"path"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Reactors as the API shows them, their loading, and the checks of a
// change that need no Vault state. The root's Vault methods authorize,
// check the application, store, log and emit.

// Reactor is a configured formula (or code of its own) that a key holding
// token:use can invoke with detokenized arguments (the root's Reactor).
type Reactor struct {
	ID       string `json:"id"`
	TenantID string `json:"tenant_id"`
	Name     string `json:"name"`
	// Formula is the formula the reactor runs, as it is now; nil for a
	// reactor that carries its own Code.
	Formula *Formula `json:"formula,omitempty"`
	// Code is the reactor's own code, for reactors without a formula.
	Code          string         `json:"code,omitempty"`
	Configuration map[string]any `json:"configuration"`
	// Application, when set, is the application whose permissions the
	// code's req.client acts with.
	Application *Ref       `json:"application,omitempty"`
	CreatedBy   string     `json:"created_by,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	ModifiedBy  string     `json:"modified_by,omitempty"`
	ModifiedAt  *time.Time `json:"modified_at,omitempty"`
}

// ReactorOf is the reactor the API shows of r, running formula f (nil for
// code of its own).
func ReactorOf(r *Record, f *Formula) *Reactor {
	out := &Reactor{
		ID: r.ID, TenantID: r.TenantID, Name: r.Name, Formula: f, Code: r.Code,
		Configuration: r.Configuration, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt,
		ModifiedBy: r.ModifiedBy, ModifiedAt: r.ModifiedAt,
	}
	if out.Configuration == nil {
		out.Configuration = map[string]any{}
	}
	if r.ApplicationID != "" {
		out.Application = &Ref{ID: r.ApplicationID}
	}
	return out
}

// MustReactor loads a reactor of tenant tid with its formula: NotFound
// for no reactor, and for a formula gone.
func MustReactor(t *unit.Tx, tid, id string) (*Record, *Formula, error) {
	if !unit.ValidID(id) {
		return nil, nil, unit.NotFoundError("reactor")
	}
	var rec Record
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntityReactor, id), &rec)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, unit.NotFoundError("reactor")
	}
	var f *Formula
	if rec.FormulaID != "" {
		if f, err = MustFormula(t, tid, rec.FormulaID); err != nil {
			return nil, nil, err
		}
	}
	return &rec, f, nil
}

// Reactors returns every reactor record of tenant tid, oldest first.
func Reactors(t *unit.Tx, tid string) ([]Record, error) {
	raws, err := t.ScanValues(barrier.Tenant(tid).Records(unit.EntityReactor))
	if err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(raws))
	for _, kv := range raws {
		var rec Record
		if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// CheckFormulaConfiguration checks a reactor's configuration against its
// formula's declarations (CheckConfiguration). A reactor without a
// formula (f nil) takes any configuration.
func CheckFormulaConfiguration(f *Formula, conf map[string]any, fe unit.FieldErrors) {
	if f != nil {
		CheckConfiguration(f.Configuration, conf, fe)
	}
}

// SameJSON reports whether a and b encode to the same JSON (maps encode
// with sorted keys): a configuration an update leaves as it was is not
// checked again.
func SameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// NameMatches applies the name filter of a list of reactors or proxies,
// ignoring case: * matches any run of characters and ? one character; a
// pattern without either matches as a substring.
func NameMatches(pattern, name string) bool {
	pattern, name = strings.ToLower(pattern), strings.ToLower(name)
	if !strings.ContainsAny(pattern, "*?") {
		return strings.Contains(name, pattern)
	}
	// path.Match treats / and \ specially; names are matched as one segment.
	pattern = strings.NewReplacer("\\", "\\\\", "[", "\\[").Replace(pattern)
	ok, _ := path.Match(pattern, strings.ReplaceAll(name, "/", "\x00"))
	return ok
}
