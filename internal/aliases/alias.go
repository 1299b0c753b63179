package aliases

import (
	"fmt"
	"io"
	"strings"

	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Alias ids. A token request's id may be an expression over the token's
// own data that uses an alias filter (package expr: alias_card,
// alias_preserve_format, alias_preserve_length), so the id keeps the shape
// of the value it replaces: a column, a validator or a report made for
// card numbers takes the token unchanged.
//
//   - The expression is checked with the request (Rules.Prepare): it must
//     parse, use an alias filter (an id copied from the data would show the
//     data to anyone who sees the id), evaluate without error over the
//     data, and give an id that obeys the id rules (Rules.IDProblem). These
//     do not depend on the randomness, so one draw from a fixed sequence
//     (probeReader) decides them before the transaction.
//   - In the transaction, aliases are drawn from Options.Rand until one is
//     free in the tenant (ID.Free), at most MaxDraws times; a token whose
//     alias is taken by an expired token replaces it, as a literal id
//     does. When every draw is taken, the request fails with Conflict (409
//     over HTTP), as a taken literal id does. The hosted service this API
//     follows silently falls back to a UUID instead; we do not, because a
//     UUID in a column that expects a card-shaped value breaks the very
//     systems the alias was asked for, where an error lets the caller
//     decide (reveal less, alias a longer value, or send no id).
//   - Deduplication is decided first: a deduplicating request that matches
//     a token gets that token, with its own id (alias or not), and no alias
//     is stored for it.
//   - The display rule (see TokenRequest.ID and display.go) is checked
//     with the request by the flow analysis of the expression; every patch
//     holds the mask of a card to it.

// MaxDraws bounds the aliases drawn for one token before the request
// fails with Conflict. With half of an expression's aliases taken, all 16
// draws collide once in 65,536 requests.
const MaxDraws = 16

// IsExpression reports whether an id is an expression (an alias or an fpe
// id): it holds "{{", which no literal id may (braces are forbidden in
// ids).
func IsExpression(id string) bool { return strings.Contains(id, "{{") }

// ID is a checked alias expression and the data it draws over.
type ID struct {
	rules *Rules
	tmpl  *expr.Template
	vars  expr.Resolver
	path  string
}

// Prepare checks an alias expression, parsed by ParseIDExpression (see
// the comment at the top of the file), reporting problems at path. vars
// resolves data for the expression. The display rule is checked beside
// it (CheckDisplay). It returns nil when the expression is refused.
func (r *Rules) Prepare(tmpl *expr.Template, vars expr.Resolver, path string, fe unit.FieldErrors) *ID {
	if !tmpl.Random() {
		fe.Add(path, "an id expression must use an alias filter (alias_card, alias_preserve_format or "+
			"alias_preserve_length) or end each {{ }} in the fpe filter: an id copied from the data would show "+
			"the data to anyone who sees the id")
		return nil
	}
	a := &ID{rules: r, tmpl: tmpl, vars: vars, path: path}
	if _, err := a.draw(&probeReader{}); err != nil {
		fe.Add(path, "%s", err)
		return nil
	}
	return a
}

// draw evaluates the alias expression with randomness from r and checks
// the id rules on the result. Its errors never quote the id, which is
// made from the data.
func (a *ID) draw(r io.Reader) (string, error) {
	v, err := a.tmpl.EvalRand(a.vars, r)
	if err != nil {
		return "", err
	}
	id := a.rules.Stringify(v)
	if problem := a.rules.IDProblem(id); problem != "" {
		return "", fmt.Errorf("the alias it gives %s", problem)
	}
	return id, nil
}

// Free draws aliases with randomness from r until one is free in the
// tenant, by taken: whether a live token holds an id (the caller's look-up
// remembers an expired token holding it, which it deletes once the new
// token may be created). Errors: Conflict when all MaxDraws draws are
// taken (with the last alias drawn, which a deduplicating request decides
// its permission on before its duplicate wins), Invalid when a draw breaks
// the id rules (a later filter made its length depend on the randomness),
// Internal when r fails, and taken's errors.
func (a *ID) Free(r io.Reader, taken func(id string) (bool, error)) (string, error) {
	id := ""
	for range MaxDraws {
		re := &readErr{r: r}
		var err error
		id, err = a.draw(re)
		if re.err != nil {
			return "", unit.AsInternal(fmt.Errorf("reading Options.Rand: %w", re.err))
		}
		if err != nil {
			return "", unit.InvalidField(a.path, "%s", err)
		}
		held, err := taken(id)
		if err != nil {
			return "", err
		}
		if !held {
			return id, nil
		}
	}
	return id, unit.Errorf(unit.Conflict, "no free alias in %d draws: every alias drawn is the id of a token; "+
		"the id expression leaves too few random characters (reveal less, alias a longer value, or send no id)", MaxDraws)
}
