package tokenvault

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Tokenize replaces the sensitive values of body with tokens and returns the
// same structure with token ids in their place. body may be a single token
// request (the result is one *Token), or any JSON object or array whose
// values are plain values, token requests, arrays and nested objects of
// these: each plain value becomes a token id string, each token request a
// *Token. Nulls are left as they are. body may be a Go value (a
// TokenRequest, maps and slices) or raw JSON ([]byte or json.RawMessage).
//
// The whole body is one transaction: if any value is invalid nothing is
// created, and the error names the path of each bad value, such as
// "cards[2].data.number"; a string (key or value) that is not valid UTF-8
// is Invalid with its path, never sealed with replacement characters.
// Requires token:create on each token's containers. A token request's id
// may be an alias expression (see TokenRequest.ID): a taken literal id,
// or an alias with no free draw, is a Conflict and creates nothing. A
// token request may carry token_intent_id instead of type and data,
// converting that token intent as CreateToken does (NotFound,
// PermissionDenied as there).
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) Tokenize(ctx context.Context, key Credential, body any) (any, error) {
	return v.tokenizeAs(ctx, keyCredential(key), body)
}

func (v *Vault) tokenizeAs(ctx context.Context, c credential, body any) (any, error) {
	root, err := tokens.DecodeBody(body)
	if err != nil {
		return nil, err
	}
	fe := unit.FieldErrors{}
	count := 0
	now := v.now()
	tree := v.tokens.PrepareTree(root, now, fe, &count)
	if count > tokens.MaxTokensPerRequest {
		return nil, unit.Errorf(Invalid, "a request may create at most %d tokens", tokens.MaxTokensPerRequest)
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	var out any
	err = v.updateOptimistic(ctx, func(t *txn) error {
		p, err := t.authorizeAs(c, PermTokenCreate)
		if err != nil {
			return err
		}
		out, err = v.tokens.CreateTree(t.Tx, p, tree)
		return err
	})
	return out, err
}

// CreateToken creates one token. Requires token:create on its containers.
// A custom id that exists is a Conflict, the same whatever the existing
// token; so is an alias id (see TokenRequest.ID) when every alias drawn is
// taken, and an alias expression that cannot give an id, or breaks the
// display rule, is Invalid at "id". A request with TokenIntentID converts
// that token intent (internal/tokens, convert.go): only with a private
// application's key (PermissionDenied otherwise), NotFound for an intent
// that does not exist, has expired, was converted or deleted, or is
// another tenant's. A string of req that is not valid UTF-8 (in id, data, mask,
// containers, metadata keys and values, search_indexes or
// fingerprint_expression) is Invalid with its path.
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) CreateToken(ctx context.Context, key Credential, req TokenRequest) (*Token, error) {
	if err := jsontext.CheckGoText(req, ""); err != nil {
		return nil, err
	}
	fe := unit.FieldErrors{}
	now := v.now()
	pt := v.tokens.Prepare(req, now, now, "", true, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	var out *Token
	err := v.updateOptimistic(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTokenCreate)
		if err != nil {
			return err
		}
		out, err = v.tokens.Create(t.Tx, p, pt)
		return err
	})
	return out, err
}

// MaxDetokenizedTokens (100) is how many distinct tokens one request may
// detokenize (the spec's limit for reactors, applied everywhere).
const MaxDetokenizedTokens = tokens.MaxDetokenized

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
	return v.detokenizeApproved(ctx, c, "", body)
}

// detokenizeApproved is detokenizeAs, held to the tenant's approval
// policy over its count of tokens (approvals_detokenize.go), or spending
// the approval approvalID.
func (v *Vault) detokenizeApproved(ctx context.Context, c credential, approvalID string, body any) (any, error) {
	doc, err := tokens.DecodeBody(body)
	if err != nil {
		return nil, err
	}
	var out any
	var pending *ApprovalRequired
	err = v.updateOptimistic(ctx, func(t *txn) error {
		pending = nil
		p, err := t.authorizeAs(c, PermTokenRead)
		if err != nil {
			return err
		}
		if pending, err = v.holdBulkDetokenize(t, p, doc, approvalID); err != nil || pending != nil {
			return err
		}
		out, err = t.detokenize(p, PermTokenRead, doc, "Token detokenized", ChannelDetokenize)
		return err
	})
	if err == nil && pending != nil {
		return nil, pending
	}
	return out, err
}

// detokenize replaces token expressions in doc (plain JSON values) using
// perm's transforms, logging each distinct token once with msg, its
// transform and channel (tokens.Service.DetokenizeLogged): Detokenize's,
// a proxy's and a reactor's.
func (t *txn) detokenize(p *principal, perm string, doc any, msg, channel string) (any, error) {
	return t.v.tokens.DetokenizeLogged(t.Tx, p, perm, doc, msg, channel)
}

// GetToken returns a token, its data shaped by the caller's token:read
// access; its fingerprint only where that access reveals the data (see
// mayReadClear). Requires token:read on the token's containers.
//
// Returns NotFound for a token that does not exist, has expired or is
// another tenant's, Unauthenticated for a key that is missing, unknown or
// expired, RateLimited over a rate limit, PermissionDenied without
// token:read on its containers, or Internal.
func (v *Vault) GetToken(ctx context.Context, key Credential, id string) (*Token, error) {
	return v.getTokenAs(ctx, keyCredential(key), id)
}

func (v *Vault) getTokenAs(ctx context.Context, c credential, id string) (*Token, error) {
	var out *Token
	err := v.updateOptimistic(ctx, func(t *txn) error {
		p, err := t.authorizeAs(c, PermTokenRead)
		if err != nil {
			return err
		}
		out, err = v.tokens.Get(t.Tx, p, id)
		return err
	})
	return out, err
}

// DeleteToken deletes a token and its index entries. Requires token:delete
// on the token's containers.
//
// Returns NotFound for a token that does not exist, has expired or is
// another tenant's, Unauthenticated for a key that is missing, unknown or
// expired, RateLimited over a rate limit, PermissionDenied without
// token:delete on its containers, StorageFull, or Internal.
func (v *Vault) DeleteToken(ctx context.Context, key Credential, id string) error {
	return v.deleteTokenAs(ctx, keyCredential(key), id)
}

func (v *Vault) deleteTokenAs(ctx context.Context, c credential, id string) error {
	return v.update(ctx, func(t *txn) error {
		p, err := t.authorizeAs(c, PermTokenDelete)
		if err != nil {
			return err
		}
		return v.tokens.DeleteID(t.Tx, p, id)
	})
}

// UpdateToken applies patch, an RFC 7386 JSON merge patch, to a token:
// data, mask and metadata are merged (null removes a key); containers,
// search_indexes, fingerprint_expression, deduplicate_token and expires_at
// are replaced when present; id and type cannot change. The token is
// validated again and its fingerprint, mask and indexes recomputed. Requires
// token:update on the token's containers, old and new; setting a mask,
// search_indexes or fingerprint_expression over stored data the patch does
// not replace whole also needs the reveal transform there, since their
// results reach the caller. Moving the token to containers where the key's
// token:read access is wider than where it is is PermissionDenied. A mask
// of a card that would show more of its number than the BIN and last four
// is Invalid at "mask", whatever the token's id (the display rule of
// TokenRequest.ID); so is a mask of a token with an alias or fpe id that
// would show less, over the stored data, than the mask it replaces.
//
// A key that may not read the token (token:read on its containers) gets
// back its id, type, containers, expiry, timestamps and actors only: no
// data, mask, fingerprint, fingerprint expression, metadata or search
// indexes; and its patch that sets mask, search_indexes or
// fingerprint_expression together with data replaces the data whole (not
// merged), so that the answer does not depend on the stored fields. A card
// patch sending a cvc starts a new retention window for it (see
// Options.Retention.CVC).
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) UpdateToken(ctx context.Context, key Credential, id string, patch json.RawMessage) (*Token, error) {
	doc, err := jsontext.Decode(patch)
	if jsontext.Refused(err) {
		return nil, err
	}
	if err != nil {
		return nil, unit.InvalidField("", "the body is not valid JSON")
	}
	fields, ok := doc.(map[string]any)
	if !ok {
		return nil, unit.InvalidField("", "a token patch must be an object")
	}
	if err := tokens.CheckPatchFields(fields); err != nil {
		return nil, err
	}
	var out *Token
	err = v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTokenUpdate)
		if err != nil {
			return err
		}
		out, err = v.tokens.Patch(t.Tx, p, id, fields)
		return err
	})
	return out, err
}

// TokenizeCard creates a card token in the card's default container
// (/pci/high/), as CreateToken with Type card and Data card. Its answer
// never reveals the number: it carries the mask (the last four digits,
// the expiration). For containers, metadata or a custom id, give the Card
// as the Data of a TokenRequest to CreateToken. Over HTTP: POST /tokens
// with {"type": "card", "data": {...}}; package client has the same
// method.
//
// Returns Invalid naming each bad field (data.number, data.expiration_month,
// data.expiration_year, data.cvc; "the card has expired" on
// data.expiration_year), Unauthenticated for an unknown key,
// PermissionDenied without token:create on /pci/high/, RateLimited,
// StorageFull or Internal.
func (v *Vault) TokenizeCard(ctx context.Context, key Credential, card Card) (*Token, error) {
	return v.CreateToken(ctx, key, TokenRequest{Type: TypeCard, Data: card.data()})
}

// data is the card as plain Go values, which the Vault checks and copies
// in one walk (a struct would take a JSON round trip to get there).
func (c Card) data() map[string]any {
	d := map[string]any{
		"number":           c.Number,
		"expiration_month": c.ExpirationMonth,
		"expiration_year":  c.ExpirationYear,
	}
	if c.CVC != "" {
		d["cvc"] = c.CVC
	}
	return d
}

// TokenizeValue creates a plain token (type token, in its default
// container) holding value, any JSON value but null: a string, a number,
// an object or an array. As CreateToken with Type token; over HTTP POST
// /tokens with {"type": "token", "data": value}; package client has the
// same method.
//
// Returns Invalid when value is null, does not encode as JSON or holds a
// string that is not valid UTF-8 (with its path under "data"),
// Unauthenticated, PermissionDenied without token:create, RateLimited,
// StorageFull or Internal.
func (v *Vault) TokenizeValue(ctx context.Context, key Credential, value any) (*Token, error) {
	return v.CreateToken(ctx, key, TokenRequest{Type: TypeToken, Data: value})
}

// TokenizeAs creates one plain token holding value, a value of the
// caller's own type (a struct, a map, a slice...), encoded as JSON: the
// whole value is one token, read back whole with DetokenizeAs[T]. It is
// a function, not a method, because methods cannot have type parameters;
// c is a *Vault, or a *client.Client for the same call over HTTP (POST
// /tokens).
//
// Returns Invalid when value does not encode as JSON, encodes as null, or
// holds a string that is not valid UTF-8 (with its path under "data"),
// and what CreateToken returns: Unauthenticated, PermissionDenied without
// token:create, RateLimited, StorageFull, Internal.
func TokenizeAs[T any](ctx context.Context, c TokenCreator, key Credential, value T) (*Token, error) {
	data, err := json.Marshal(value)
	if err != nil {
		return nil, &Error{Kind: Invalid, Message: "the value does not encode as JSON",
			Fields: map[string][]string{"data": {"does not encode as JSON"}}}
	}
	return c.CreateToken(ctx, key, TokenRequest{Type: TypeToken, Data: json.RawMessage(data)})
}

// DetokenizeAs reads the token id and decodes its data into a T, the
// caller's own type (typically the T given to TokenizeAs). The data is
// what GetToken answers: shaped by the key's token:read transform, so a
// key that may see only the mask decodes the mask, and the read is
// audited. c is a *Vault, or a *client.Client for the same call over HTTP
// (GET /tokens/{id}).
//
// Returns PermissionDenied when the key's access redacts the data (there
// is nothing to decode: never a silent zero T), Invalid naming "data"
// when the data does not decode into T (a mask shaped otherwise than the
// value, or another type), and what GetToken returns: NotFound for an
// unknown or another tenant's token, Unauthenticated, PermissionDenied
// without token:read, RateLimited, Internal.
func DetokenizeAs[T any](ctx context.Context, c TokenReader, key Credential, id string) (T, error) {
	var out T
	tok, err := c.GetToken(ctx, key, id)
	if err != nil {
		return out, err
	}
	if tok.Data == nil {
		return out, &Error{Kind: PermissionDenied, Message: "the key's access redacts this token's data"}
	}
	b, err := json.Marshal(tok.Data)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return out, &Error{Kind: Invalid, Message: "the token's data does not decode into " + reflect.TypeFor[T]().String(),
			Fields: map[string][]string{"data": {"does not decode into " + reflect.TypeFor[T]().String()}}}
	}
	return out, nil
}
