package access

import (
	"slices"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// Principal is an authenticated key: whose it is and what it may do.
type Principal struct {
	TenantID  string
	ActorID   string
	ActorType string
	// ActorName is an application's name, read with it (events name
	// their actor by it without reading the application again).
	ActorName string
	// AppID is, for a session, the private application that authorized
	// it (whose authority its accesses are on); empty otherwise.
	AppID       string
	AppType     ApplicationType
	Permissions []string
	Rules       []Rule
	// Ceilings, for a session, are what its authorizer held when it
	// authorized it and what it holds now: a session never does more than
	// its own grants and every ceiling allow.
	Ceilings []Grants
	// Purpose is the purpose of access the call names (empty: none), from
	// its tenant's list: set on the call's own copy of the principal
	// (WithPurpose), never on one the AuthCache keeps.
	Purpose string
	// RevealBudget is the reveal budget of the application p's reveals
	// count against (BudgetHolder): its own, or its authorizer's for a
	// session; nil for none.
	RevealBudget *RevealBudget
}

// WithPurpose returns p for a call naming purpose: p itself when it
// already names it, else a copy (a cached principal is shared by calls).
func (p *Principal) WithPurpose(purpose string) *Principal {
	if p.Purpose == purpose {
		return p
	}
	cp := *p
	cp.Purpose = purpose
	return &cp
}

func (p *Principal) Actor() unit.Actor {
	return unit.Actor{ID: p.ActorID, Type: p.ActorType, Name: p.ActorName}
}

// Has reports whether p holds perm, directly or through any rule, within
// its ceilings (HasWithin). Which tokens a rule-scoped permission
// reaches is decided per token.
func (p *Principal) Has(perm string) bool {
	return HasWithin(Grants{Permissions: p.Permissions, Rules: p.Rules}, p.Ceilings, perm)
}

// Covers reports whether p holds every permission in perms directly. A key
// may only hand out (or take over, by regenerating a key) management power
// it holds itself.
func (p *Principal) Covers(perms []string) bool {
	for _, perm := range perms {
		if !slices.Contains(p.Permissions, perm) {
			return false
		}
	}
	return true
}

// Decide applies p's grants to one token. A session is also held to its
// authorizer's grants: all must allow, and the most restrictive transform
// applies (DecideWithin).
func (p *Principal) Decide(perm string, tok TokenScope) (string, bool) {
	d := DecideWithinFor(p.Permissions, p.Rules, p.Ceilings, perm, tok, p.Purpose)
	return d.Transform, d.OK
}

// MayDo reports whether p may do perm on a token of scope tok, with any
// transform.
func (p *Principal) MayDo(perm string, tok TokenScope) bool {
	_, ok := p.Decide(perm, tok)
	return ok
}

// DecideOne is Decide for a call on one named token (a get, a delete, a
// token a detokenize names): a refusal is the error to answer, Invalid
// naming the field "purpose" when the call names no purpose and a rule
// requiring one would have decided (ErrPurposeRequired), else
// PermissionDenied naming perm.
func (p *Principal) DecideOne(perm string, tok TokenScope) (string, error) {
	d := DecideWithinFor(p.Permissions, p.Rules, p.Ceilings, perm, tok, p.Purpose)
	switch {
	case d.OK:
		return d.Transform, nil
	case d.PurposeRequired:
		return "", PurposeRequiredError()
	}
	return "", p.DeniedOn(perm, tok)
}

// mayRead reports whether p may read rec: token:read on its containers,
// with any transform. The stored content of a token (mask, metadata,
// search indexes, expressions) reaches only such callers; its fingerprint
// only those that read it in clear (mayReadClear).
func (p *Principal) MayRead(tok TokenScope) bool {
	_, ok := p.Decide(PermTokenRead, tok)
	return ok
}

// MayReadIn reports whether p may read tokens in containers whatever their
// id (a session rule naming ids does not count), with any transform.
func (p *Principal) MayReadIn(containers []string) bool {
	_, ok := p.Decide(PermTokenRead, TokenScope{Containers: containers})
	return ok
}

// mayReadClear reports whether p reads rec in clear: token:read on its
// containers with the reveal transform. Whether a value equals rec's data
// is told only to such callers: rec's fingerprint is shown, a fingerprint
// term matches rec, and a deduplicating create finds rec only for them. A
// key that reads rec only masked or redacted could otherwise tokenize
// guesses where it may and compare: a card's BIN and last four leave
// about 1,000 Luhn-valid middles to try.
func (p *Principal) MayReadClear(tok TokenScope) bool {
	transform, ok := p.Decide(PermTokenRead, tok)
	return ok && transform == TransformReveal
}

// MayReadClearIn is mayReadClear for tokens in containers whatever their
// id (a session rule naming ids does not count): deduplication, and
// anything else that answers whether a value is tokenized there, is
// offered only then.
func (p *Principal) MayReadClearIn(containers []string) bool {
	transform, ok := p.Decide(PermTokenRead, TokenScope{Containers: containers})
	return ok && transform == TransformReveal
}

// ReachesAll reports whether p's perm reaches every token, whatever its
// containers and id: granted to it and to every ceiling directly, or by a
// rule on "/" (or, for a session, a rule without container or
// conditions).
func (p *Principal) ReachesAll(perm string) bool {
	if !grantsEverywhere(p.Permissions, p.Rules, perm) {
		return false
	}
	for _, c := range p.Ceilings {
		if !grantsEverywhere(c.Permissions, c.Rules, perm) {
			return false
		}
	}
	return true
}

func grantsEverywhere(perms []string, rules []Rule, perm string) bool {
	if slices.Contains(perms, perm) {
		return true
	}
	return slices.ContainsFunc(rules, func(r Rule) bool {
		everywhere := (r.Container == "/" || r.Container == "" && len(r.Conditions) == 0) && len(r.Purposes) == 0
		return everywhere && slices.Contains(r.Permissions, perm)
	})
}

// MayCreateIntent reports whether p may create token intents: it holds
// token-intent:create, or it is a public application, which holds it by
// default.
func (p *Principal) MayCreateIntent() bool {
	if p.ActorType == unit.ActorApplication && p.AppType == Public {
		return true
	}
	return p.Has(PermTokenIntentCreate)
}
