package tokenvault

import (
	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// parseIDExpression parses a token request's id when it is an expression
// (it holds "{{", which no literal id may): once, for both kinds of
// expression id. An id whose every {{ }} ends in the fpe filter is derived
// with FF1 (deriveFPEID), so nothing of the data is printed in clear
// beyond what a card transformation keeps (its BIN and last four, which
// PCI DSS allows to be shown); any other is an alias expression
// (prepareAlias). It returns nil for a literal id, and for an expression
// that does not parse, whose problems it adds to fe at path.
func parseIDExpression(id, path string, fe unit.FieldErrors) *expr.Template {
	if !isAliasExpression(id) {
		return nil
	}
	if len(id) > maxExpressionBytes {
		fe.Add(path, "must be at most %d bytes", maxExpressionBytes)
		return nil
	}
	tmpl, err := expr.Parse(id)
	if err != nil {
		fe.Add(path, "%s", err.Error())
		return nil
	}
	return tmpl
}

// deriveFPEID evaluates pt's id expression with the tenant's token-id FPE
// key at its current version (barrier.Keys.FPEIDs: the same value gets
// the same id until RotateFPEKey makes a new version current) and makes
// the result pt's id, which must obey the id rules.
//
// The id is a function of the data, so a taken id (409) would tell the
// caller that a token of that value exists: only a key that reads
// tokens in clear in the token's containers may derive one
// (PermissionDenied otherwise), as only such a key is told of a duplicate
// (createToken).
func (t *txn) deriveFPEID(p *principal, pt *preparedToken) error {
	if !p.MayReadClearIn(pt.containers) {
		return unit.Errorf(PermissionDenied, "an id derived with fpe needs token:read revealing where the token is created: "+
			"a taken id would tell whether a value is tokenized")
	}
	ks, err := t.TenantKeys(p.TenantID, false)
	if err != nil {
		return err
	}
	v, err := pt.idTmpl.EvalWith(pt.idVars, expr.EvalOptions{FPE: ks.FPEIDs()})
	if err != nil {
		return unit.InvalidField(pt.idPath, "%s", err.Error())
	}
	id := stringify(v)
	if problem := customIDProblem(id); problem != "" {
		return unit.InvalidField(pt.idPath, "the derived id %s", problem)
	}
	pt.id = id
	return nil
}

// fpeIDVars are the variables of an fpe id: data (a card's without its
// cvc, as for every expression) and metadata, which fpe_tweaked may take
// its tweak from ({{ data.number | fpe_tweaked: "digits", "metadata.region" }}).
func fpeIDVars(typ string, data any, metadata map[string]string) expr.Resolver {
	md := make(map[string]any, len(metadata))
	for k, v := range metadata {
		md[k] = v
	}
	return expr.Vars(map[string]any{"data": exprData(typ, data), "metadata": md})
}
