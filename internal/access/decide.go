package access

import (
	"slices"
	"strings"
)

// TokenScope is what access rules look at on a token: its id and its
// containers.
type TokenScope struct {
	ID         string
	Containers []string
}

// Condition attributes and operators, for session rules.
const (
	AttributeID        = "id"
	AttributeContainer = "container"
	OperatorEquals     = "equals"
	OperatorStartsWith = "starts_with"
)

// Transforms shape the data of token responses.
const (
	TransformRedact = "redact"
	TransformMask   = "mask"
	TransformReveal = "reveal"
)

// ImplicitTransform is the transform of a permission granted directly,
// without rules: reading-like permissions see the mask, token:use sees the
// plaintext (it exists to detokenize), token:delete shows no data.
func ImplicitTransform(perm string) string {
	switch perm {
	case PermTokenUse:
		return TransformReveal
	case PermTokenDelete:
		return TransformRedact
	default:
		return TransformMask
	}
}

// transformRank orders transforms from most to least restrictive.
var transformRank = map[string]int{TransformRedact: 0, TransformMask: 1, TransformReveal: 2}

// Decide is the access rule engine: given a key's direct permissions and
// rules, may it use perm on tok, and with which transform?
//
// It is decided for each of the token's containers in turn: the rules are
// tried in ascending priority, and the first that matches (its container
// contains the token's container or, for session rules, all its conditions
// hold) and grants perm gives the transform. Where no rule does, a direct
// permission gives the implicit transform. A token in several containers
// must be allowed in every one of them, and gets the most restrictive of
// their transforms. No decision anywhere means no access.
//
// Decide is DecideFor a call that names no purpose: rules that require a
// purpose are passed over. Decide is a pure function of its arguments;
// rules must be sorted by priority (see SortedRules).
func Decide(perms []string, rules []Rule, perm string, tok TokenScope) (transform string, ok bool) {
	d := DecideFor(perms, rules, perm, tok, "")
	return d.Transform, d.OK
}

// Decision is what the rule engine decided for one call on one token.
type Decision struct {
	// Transform is the transform that applies, when OK.
	Transform string
	// OK reports whether the call may use the permission on the token.
	OK bool
	// PurposeRequired reports that, the call naming no purpose, a rule
	// requiring one matched the token and granted the permission: with a
	// purpose of its list, the call could have been decided (by that
	// rule, or by another for another purpose). It is set only when OK is
	// false: a rule without purposes, or a direct permission, that
	// decides a call without a purpose is that call's answer.
	PurposeRequired bool
}

// DecideFor is Decide for a call that names purpose (empty: none). A rule
// with purposes applies only to a call naming one of them; for a call
// naming another it is passed over, as a rule on another container is.
// For a call naming none it is passed over too, and if nothing else
// decides, the Decision says a purpose was required (a read of one token
// answers that as Invalid rather than as a denial). DecideFor is a pure
// function of its arguments; rules must be sorted by priority.
func DecideFor(perms []string, rules []Rule, perm string, tok TokenScope, purpose string) Decision {
	if len(tok.Containers) == 0 {
		return Decision{}
	}
	var d Decision
	for i, c := range tok.Containers {
		t, ok, missing := decideIn(perms, rules, perm, tok.ID, c, purpose)
		if !ok {
			return Decision{PurposeRequired: missing}
		}
		if i == 0 || transformRank[t] < transformRank[d.Transform] {
			d.Transform = t
		}
	}
	d.OK = true
	return d
}

// DecideWithin is Decide for a key held to ceilings as well (a session, by
// what its authorizer granted it and holds now): its own grants and every
// ceiling must allow, and the most restrictive transform applies. Rules
// must be sorted by priority.
func DecideWithin(perms []string, rules []Rule, ceilings []Grants, perm string, tok TokenScope) (string, bool) {
	d := DecideWithinFor(perms, rules, ceilings, perm, tok, "")
	return d.Transform, d.OK
}

// DecideWithinFor is DecideWithin for a call that names purpose, each of
// the grants and ceilings decided as DecideFor decides: a purpose is
// required when one of them refused for want of it.
func DecideWithinFor(perms []string, rules []Rule, ceilings []Grants, perm string, tok TokenScope, purpose string) Decision {
	d := DecideFor(perms, rules, perm, tok, purpose)
	if !d.OK {
		return d
	}
	for _, c := range ceilings {
		limit := DecideFor(c.Permissions, c.Rules, perm, tok, purpose)
		if !limit.OK {
			return limit
		}
		if transformRank[limit.Transform] < transformRank[d.Transform] {
			d.Transform = limit.Transform
		}
	}
	return d
}

func decideIn(perms []string, rules []Rule, perm, id, container, purpose string) (transform string, ok, missing bool) {
	_, transform, ok, missing = decidingRule(perms, rules, perm, id, container, purpose)
	return transform, ok, missing
}

// decidingRule is decideIn with the index in rules of the rule that
// decided (-1 when a direct permission did, or nothing did): the one
// walk both Decide and Explain take.
func decidingRule(perms []string, rules []Rule, perm, id, container, purpose string) (rule int, transform string, ok, missing bool) {
	for i, r := range rules {
		if !ruleMatches(r, id, container) || !slices.Contains(r.Permissions, perm) {
			continue
		}
		if len(r.Purposes) == 0 || purpose != "" && slices.Contains(r.Purposes, purpose) {
			return i, r.Transform, true, false
		}
		missing = missing || purpose == ""
	}
	if slices.Contains(perms, perm) {
		return -1, ImplicitTransform(perm), true, false
	}
	return -1, "", false, missing
}

// ruleMatches reports whether r applies to the token with this id in this
// container. A rule with neither container nor conditions (possible only
// for sessions) applies to every token.
func ruleMatches(r Rule, id, container string) bool {
	if r.Container != "" {
		return ContainerContains(r.Container, container)
	}
	for _, c := range r.Conditions {
		var attr string
		switch c.Attribute {
		case AttributeID:
			attr = id
		case AttributeContainer:
			attr = container
		default:
			return false
		}
		switch c.Operator {
		case OperatorEquals:
			if attr != c.Value {
				return false
			}
		case OperatorStartsWith:
			if !strings.HasPrefix(attr, c.Value) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// ContainerContains reports whether container outer contains inner:
// "/pci/" contains "/pci/" and "/pci/high/", not "/pcix/". Both end in
// "/", so a prefix test respects segment boundaries.
func ContainerContains(outer, inner string) bool { return strings.HasPrefix(inner, outer) }

// SortedRules returns a copy of rules in ascending priority, the order
// Decide reads them in.
func SortedRules(rules []Rule) []Rule {
	rules = slices.Clone(rules)
	slices.SortStableFunc(rules, func(a, b Rule) int { return a.Priority - b.Priority })
	return rules
}

// TransformRank orders transforms from most to least restrictive: redact
// 0, mask 1, reveal 2.
func TransformRank(transform string) int { return transformRank[transform] }
