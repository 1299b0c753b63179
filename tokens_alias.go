package tokenvault

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Alias ids. A token request's id may be an expression over the token's
// own data that uses an alias filter (package expr: alias_card,
// alias_preserve_format, alias_preserve_length), so the id keeps the shape
// of the value it replaces: a column, a validator or a report made for
// card numbers takes the token unchanged.
//
//   - The expression is checked with the request (prepareAlias): it must
//     parse, use an alias filter (an id copied from the data would show the
//     data to anyone who sees the id), evaluate without error over the
//     data, and give an id that obeys the id rules (customIDProblem). These
//     do not depend on the randomness, so one draw from a fixed sequence
//     (probeRand) decides them before the transaction.
//   - In the transaction, aliases are drawn from Options.Rand until one is
//     free in the tenant (freeAlias), at most maxAliasDraws times; a token
//     whose alias is taken by an expired token replaces it, as a literal id
//     does. When every draw is taken, the request fails with Conflict (409
//     over HTTP), as a taken literal id does. The hosted service this API
//     follows silently falls back to a UUID instead; we do not, because a
//     UUID in a column that expects a card-shaped value breaks the very
//     systems the alias was asked for, where an error lets the caller
//     decide (reveal less, alias a longer value, or send no id).
//   - Deduplication is decided first: a deduplicating request that matches
//     a token gets that token, with its own id (alias or not), and no alias
//     is stored for it.
//   - The display rule (see TokenRequest.ID and tokens_alias_display.go)
//     is checked with the request by the flow analysis of the expression;
//     every patch holds the mask of a card to it.

// maxAliasDraws bounds the aliases drawn for one token before the request
// fails with Conflict. With half of an expression's aliases taken, all 16
// draws collide once in 65,536 requests.
const maxAliasDraws = 16

// isAliasExpression reports whether an id is an alias expression: it holds
// "{{", which no literal id may (braces are forbidden in ids).
func isAliasExpression(id string) bool { return strings.Contains(id, "{{") }

// aliasID is a checked alias expression and the data it draws over.
type aliasID struct {
	tmpl *expr.Template
	vars expr.Resolver
	path string
}

// aliasRand is Options.Rand behind a lock, since a Reader given in a test
// (a bytes.Reader) need not be safe for concurrent use.
type aliasRand struct {
	mu sync.Mutex
	r  io.Reader
}

func (a *aliasRand) Read(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.r.Read(p)
}

// probeReader is the fixed sequence of bytes 0, 1, 2, ... that checks an
// alias expression before the transaction: the same for every check, so
// the check, and what a draw shows of the data, does not depend on luck.
type probeReader struct{ next byte }

func (p *probeReader) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = p.next
		p.next++
	}
	return len(b), nil
}

// prepareAlias checks an alias expression, parsed by parseIDExpression
// (see the comment at the top of the file), reporting problems at path.
// vars resolves data for the expression. The display rule is checked
// beside it (checkDisplay).
func prepareAlias(tmpl *expr.Template, vars expr.Resolver, path string, fe unit.FieldErrors) *aliasID {
	if !tmpl.Random() {
		fe.Add(path, "an id expression must use an alias filter (alias_card, alias_preserve_format or "+
			"alias_preserve_length) or end each {{ }} in the fpe filter: an id copied from the data would show "+
			"the data to anyone who sees the id")
		return nil
	}
	a := &aliasID{tmpl: tmpl, vars: vars, path: path}
	if _, err := a.draw(&probeReader{}); err != nil {
		fe.Add(path, "%s", err)
		return nil
	}
	return a
}

// draw evaluates the alias expression with randomness from r and checks
// the id rules on the result. Its errors never quote the id, which is
// made from the data.
func (a *aliasID) draw(r io.Reader) (string, error) {
	v, err := a.tmpl.EvalRand(a.vars, r)
	if err != nil {
		return "", err
	}
	id := stringify(v)
	if problem := customIDProblem(id); problem != "" {
		return "", fmt.Errorf("the alias it gives %s", problem)
	}
	return id, nil
}

// readErr remembers the error of its reader, so a failing Options.Rand is
// an Internal error rather than a user's Invalid one.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}

// freeAlias draws aliases until one is free in the tenant, and returns it
// with the expired token that holds it, if one does (the caller deletes it
// once the new token may be created). Errors: Conflict when all
// maxAliasDraws draws are taken (with the last alias drawn, which a
// deduplicating request decides its permission on before its duplicate
// wins), Invalid when a draw breaks the id rules
// (a later filter made its length depend on the randomness), Internal when
// Options.Rand fails.
func (t *txn) freeAlias(tid string, a *aliasID) (string, *tokens.Record, error) {
	id := ""
	for range maxAliasDraws {
		r := &readErr{r: &t.v.rand}
		var err error
		id, err = a.draw(r)
		if r.err != nil {
			return "", nil, unit.AsInternal(fmt.Errorf("reading Options.Rand: %w", r.err))
		}
		if err != nil {
			return "", nil, unit.InvalidField(a.path, "%s", err)
		}
		old, err := t.loadToken(tid, id, true)
		if err != nil {
			return "", nil, err
		}
		if old == nil {
			return id, nil, nil
		}
		if old.Expired(t.Now) {
			return id, old, nil
		}
	}
	return id, nil, unit.Errorf(Conflict, "no free alias in %d draws: every alias drawn is the id of a token; "+
		"the id expression leaves too few random characters (reveal less, alias a longer value, or send no id)", maxAliasDraws)
}
