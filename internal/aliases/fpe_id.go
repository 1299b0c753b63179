package aliases

import (
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ParseIDExpression parses a token request's id when it is an expression
// (it holds "{{", which no literal id may): once, for both kinds of
// expression id. An id whose every {{ }} ends in the fpe filter is derived
// with FF1 (DeriveFPEID), so nothing of the data is printed in clear
// beyond what a card transformation keeps (its BIN and last four, which
// PCI DSS allows to be shown); any other is an alias expression
// (Prepare). It returns nil for a literal id, and for an expression that
// does not parse, whose problems it adds to fe at path.
func (r *Rules) ParseIDExpression(id, path string, fe unit.FieldErrors) *expr.Template {
	if !IsExpression(id) {
		return nil
	}
	if len(id) > r.MaxExpressionBytes {
		fe.Add(path, "must be at most %d bytes", r.MaxExpressionBytes)
		return nil
	}
	tmpl, err := expr.Parse(id)
	if err != nil {
		fe.Add(path, "%s", err.Error())
		return nil
	}
	return tmpl
}

// DeriveFPEID evaluates a token's id expression (tmpl over vars, from
// FPEIDVars; problems are reported at path) with the tenant's token-id FPE
// key at its current version (barrier.Keys.FPEIDs: the same value gets the
// same id until RotateFPEKey makes a new version current) and returns the
// id, which must obey the id rules.
//
// The id is a function of the data, so a taken id (409) would tell the
// caller that a token of that value exists: only a key that reads tokens
// in clear in the token's containers may derive one (PermissionDenied
// otherwise), as only such a key is told of a duplicate.
func (r *Rules) DeriveFPEID(t *unit.Tx, p *access.Principal, containers []string, tmpl *expr.Template, vars expr.Resolver, path string) (string, error) {
	if !p.MayReadClearIn(containers) {
		return "", unit.Errorf(unit.PermissionDenied, "an id derived with fpe needs token:read revealing where the token is created: "+
			"a taken id would tell whether a value is tokenized")
	}
	ks, err := t.TenantKeys(p.TenantID, false)
	if err != nil {
		return "", err
	}
	v, err := tmpl.EvalWith(vars, expr.EvalOptions{FPE: ks.FPEIDs()})
	if err != nil {
		return "", unit.InvalidField(path, "%s", err.Error())
	}
	id := r.Stringify(v)
	if problem := r.IDProblem(id); problem != "" {
		return "", unit.InvalidField(path, "the derived id %s", problem)
	}
	return id, nil
}

// FPEIDVars are the variables of an fpe id: data (as every expression
// sees it, a card's without its cvc) and metadata, which fpe_tweaked may
// take its tweak from ({{ data.number | fpe_tweaked: "digits", "metadata.region" }}).
func (r *Rules) FPEIDVars(typ string, data any, metadata map[string]string) expr.Resolver {
	md := make(map[string]any, len(metadata))
	for k, v := range metadata {
		md[k] = v
	}
	return expr.Vars(map[string]any{"data": r.ExprData(typ, data), "metadata": md})
}
