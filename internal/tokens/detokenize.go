package tokens

import (
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// MaxDetokenized is how many distinct tokens one request may
// detokenize (the spec's limit for reactors, applied everywhere).
const MaxDetokenized = 100

// detokenizer resolves the token expressions of one request.
type detokenizer struct {
	s      *Service
	t      *unit.Tx
	p      *access.Principal
	perm   string
	read   func(rec *Record, transform string) error
	values map[string]any // token id -> shaped value
}

// Detokenize replaces token expressions in doc (plain JSON values) using
// perm's transforms, emitting token.read for each distinct token once and
// handing it to read with its transform (the caller logs and counts it).
// At most MaxDetokenized distinct tokens (Invalid beyond); an unknown
// token is Invalid at its string's path, one perm does not reach
// PermissionDenied.
func (s *Service) Detokenize(t *unit.Tx, p *access.Principal, perm string, doc any, read func(rec *Record, transform string) error) (any, error) {
	d := &detokenizer{s: s, t: t, p: p, perm: perm, read: read, values: map[string]any{}}
	return Walk(doc, "", func(v any, path string) (any, bool, error) {
		s, ok := v.(string)
		if !ok {
			return nil, false, nil
		}
		out, err := d.expand(s, path)
		return out, true, err
	})
}

// expand evaluates one string as a template over
func (d *detokenizer) expand(s, path string) (any, error) {
	tmpl, err := expr.Parse(s)
	if err != nil {
		return nil, unit.InvalidField(path, "%s", err.Error())
	}
	if !tmpl.HasExpressions() {
		return s, nil
	}
	for _, id := range tmpl.Roots() {
		if err := d.resolve(id, path); err != nil {
			return nil, err
		}
	}
	out, err := tmpl.Eval(func(root string) (any, error) { return d.values[root], nil })
	if err != nil {
		return nil, unit.InvalidField(path, "%s", err.Error())
	}
	return out, nil
}

// resolve loads, authorizes and logs a token the first time it is named.
func (d *detokenizer) resolve(id, path string) error {
	if _, done := d.values[id]; done {
		return nil
	}
	if len(d.values) == MaxDetokenized {
		return unit.InvalidField(path, "a request may detokenize at most %d tokens", MaxDetokenized)
	}
	rec, err := d.s.Load(d.t, d.p.TenantID, id, false)
	if err != nil {
		return err
	}
	if rec == nil {
		return unit.InvalidField(path, "token %q does not exist", id)
	}
	transform, err := d.p.DecideOne(d.perm, ScopeOf(rec))
	if err != nil {
		return err
	}
	transform, err = d.s.gate(d.t, d.p, id, transform)
	if err != nil {
		return err
	}
	d.s.decoyRead(d.t, d.p, rec)
	d.values[id] = Value(rec, transform)
	if err := EmitReadRecord(d.t, d.p, rec); err != nil {
		return err
	}
	return d.read(rec, transform)
}
