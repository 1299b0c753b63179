package tokenvault

import (
	"context"
	"encoding/json"
	"reflect"
)

// Card is the data of a card token (type card), as Go fields: what a
// TokenRequest of type card holds in Data, which a Card may also be
// given as. The card's number is 13 to 19 plain digits passing the Luhn
// check, ExpirationMonth 1 to 12, ExpirationYear four digits, and the card
// not expired; CVC, when set, is 3 or 4 digits and is kept only for
// Options.Retention.CVC.
type Card struct {
	Number          string `json:"number"`
	ExpirationMonth int    `json:"expiration_month"`
	ExpirationYear  int    `json:"expiration_year"`
	CVC             string `json:"cvc,omitempty"`
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

// TokenCreator creates tokens: a *Vault in process, or a *client.Client
// over HTTP. TokenizeAs takes either.
type TokenCreator interface {
	CreateToken(ctx context.Context, key Credential, req TokenRequest) (*Token, error)
}

// TokenReader reads tokens: a *Vault in process, or a *client.Client over
// HTTP. DetokenizeAs takes either.
type TokenReader interface {
	GetToken(ctx context.Context, key Credential, id string) (*Token, error)
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
