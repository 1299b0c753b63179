package intents

import (
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Converting a token intent into a token.
//
// A token request carrying token_intent_id (CreateToken, or a token
// request in Tokenize) takes its type and data from the intent; every
// other field (id, mask, containers, metadata, search indexes,
// fingerprint expression, expires_at) is the request's, validated as for
// any token once the data is known. In one transaction the intent is read,
// the token created and the intent deleted: two conversions of one intent
// cannot both succeed (the second finds no intent: NotFound), and a
// conversion that fails leaves the intent as it was.
//
// Only a private application's key converts (the backend's, holding
// token:create on the token's containers): a public key or a session is
// PermissionDenied, so that what a browser collected is placed by the
// backend. A card's cvc is not carried over: an intent may hold one for
// the time it lives, the token never gets it.
//
// Conversion deduplicates, as the hosted service's does: when a live token
// of the same type, fingerprint, fingerprint expression and containers
// exists that the key may read, the intent updates it instead of making a
// new one (whatever deduplicate_token says): its data is replaced by the
// intent's (so a card's new expiration is written, and a cvc it held is
// dropped, as the intent brings none), its mask and indexes recomputed,
// its other fields kept; the request's other fields are not applied. The
// update needs token:update on the token; a key without it gets the
// existing token unchanged (read, as a deduplicated create is). Either way
// the intent is consumed.
//
// Every conversion answers as a create does, whether it made a token or
// deduplicated onto one, changed or not: the data shaped by the transform
// of the key's token:create rule, a card or bank account never revealed
// (its mask). Answering a deduplicated conversion as a read (the whole
// number for a reveal rule) made the same request answer the mask the
// first time and the number the next.
//
// This package owns the intent's side (who converts, which intent, its
// removal, its event); the token's side (validation, deduplication,
// creation) is the token core's, which the caller passes as a function.

// msgConverted is the log line of a conversion (operation update: the
// intent became a token; the token's own line says created).
const msgConverted = "Token intent converted"

// Convert converts the live intent id of p's tenant: makeToken, given the
// intent, creates the token (or refreshes the one it deduplicates to) in
// t and returns its id; then the intent is removed and
// token-intent.converted emitted.
//
// Returns PermissionDenied for a key that is not a private application's
// (before the intent is looked up), ErrNotFound for an intent that does
// not exist (expired, converted, deleted, another tenant's), and
// makeToken's error.
func Convert(t *unit.Tx, p *access.Principal, id string, makeToken func(rec *Record) (tokenID string, err error)) error {
	if p.ActorType != unit.ActorApplication || p.AppType != access.Private {
		return unit.Errorf(unit.PermissionDenied, "token intents are converted with the key of a private application")
	}
	rec, err := Live(t, p.TenantID, id)
	if err != nil {
		return err
	}
	tokenID, err := makeToken(rec)
	if err != nil {
		return err
	}
	if err := remove(t, p.Actor(), rec, unit.OpUpdate, msgConverted); err != nil {
		return err
	}
	return emit(t, events.TokenIntentConverted, p.Actor(), rec, tokenID)
}

// ErrExpressionsOverData refuses a conversion setting expressions over
// data its key may not see (CheckExpressions).
var ErrExpressionsOverData = unit.Errorf(unit.PermissionDenied, "setting a mask, search indexes, fingerprint expression "+
	"or id expression when converting a token intent needs token:create with the reveal transform where the token "+
	"goes: the expressions would show the intent's data")

// CheckExpressions refuses, before anything is evaluated over the
// intent's data, a conversion that sets its own expressions (mask, search
// indexes, fingerprint expression, an id with {{ }}) when p's
// token:create rule in containers, where the token goes, does not reveal.
// The caller calls it only for a request that sets one. The converting
// key did not send the data: how such an expression fares over it (an
// error or none, the mask in the answer) would read it, a character at a
// time, the intent kept after each failed guess, as a PATCH setting
// expressions over stored data would. The type's default expressions are
// the same for every value of a type, so they tell nothing.
func CheckExpressions(p *access.Principal, containers []string) error {
	if transform, ok := p.Decide(access.PermTokenCreate, access.TokenScope{Containers: containers}); !ok || transform != access.TransformReveal {
		return ErrExpressionsOverData
	}
	return nil
}

// Converter is Convert and CheckExpressions as the token feature calls
// them (tokens.Intents): the token's side of a conversion sees only the
// intent's type and sealed data JSON, never its record.
type Converter struct{}

// Convert is Convert, handing makeToken the intent's type and data.
func (Converter) Convert(t *unit.Tx, p *access.Principal, id string, makeToken func(typ string, data []byte) (tokenID string, err error)) error {
	return Convert(t, p, id, func(rec *Record) (string, error) { return makeToken(rec.Type, rec.Data) })
}

// CheckExpressions is CheckExpressions.
func (Converter) CheckExpressions(p *access.Principal, containers []string) error {
	return CheckExpressions(p, containers)
}
