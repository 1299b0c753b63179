package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// MaxDetokenizedTokens is how many distinct tokens one request may
// detokenize (the spec's limit for reactors, applied everywhere).
const MaxDetokenizedTokens = 100

// Detokenize returns body with every {{ <token_id> }} expression replaced by
// the token's data: a string that is exactly one expression becomes the
// value with its JSON type (objects stay objects), an expression inside
// longer text is inserted as text. Filters apply, for example
// {{ <token_id> | json: '$.number' }}. The data inserted is shaped by the
// caller's token:read access to each token (reveal, mask, or null for
// redact).
//
// An expression naming an unknown token is Invalid, with the path of the
// string; a token the caller may not read is PermissionDenied. Each token
// detokenized is logged. Requires token:read on each token's containers.
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) Detokenize(ctx context.Context, key Credential, body any) (any, error) {
	return v.detokenizeAs(ctx, keyCredential(key), body)
}

func (v *Vault) detokenizeAs(ctx context.Context, c credential, body any) (any, error) {
	doc, err := tokens.DecodeBody(body)
	if err != nil {
		return nil, err
	}
	var out any
	err = v.updateOptimistic(ctx, func(t *txn) error {
		p, err := t.authorizeAs(c, PermTokenRead)
		if err != nil {
			return err
		}
		out, err = t.detokenize(p, PermTokenRead, doc, "Token detokenized", ChannelDetokenize)
		return err
	})
	return out, err
}

// detokenizer resolves the token expressions of one request.
type detokenizer struct {
	t    *txn
	p    *principal
	perm string
	msg  string
	// channel is what the data went to (a Channel* constant).
	channel string
	values  map[string]any // token id -> shaped value
}

// detokenize replaces token expressions in doc (plain JSON values) using
// perm's transforms, logging each distinct token once with msg, its
// transform and channel.
func (t *txn) detokenize(p *principal, perm string, doc any, msg, channel string) (any, error) {
	d := &detokenizer{t: t, p: p, perm: perm, msg: msg, channel: channel, values: map[string]any{}}
	return tokens.Walk(doc, "", func(v any, path string) (any, bool, error) {
		s, ok := v.(string)
		if !ok {
			return nil, false, nil
		}
		out, err := d.expand(s, path)
		return out, true, err
	})
}

// expand evaluates one string as a template over tokens.
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
	if len(d.values) == MaxDetokenizedTokens {
		return unit.InvalidField(path, "a request may detokenize at most %d tokens", MaxDetokenizedTokens)
	}
	rec, err := d.t.loadToken(d.p.TenantID, id, false)
	if err != nil {
		return err
	}
	if rec == nil {
		return unit.InvalidField(path, "token %q does not exist", id)
	}
	transform, ok := d.p.Decide(d.perm, tokens.ScopeOf(rec))
	if !ok {
		return unit.Forbidden(d.perm)
	}
	d.values[id] = tokens.Value(rec, transform)
	d.t.count(TokensDetokenized)
	if err := tokens.EmitReadRecord(d.t.Tx, d.p, rec); err != nil {
		return err
	}
	return d.t.logTokenRead(d.p, rec.Type, rec.ID, d.msg, transform, d.channel)
}
