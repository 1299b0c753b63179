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
// Decide is a pure function of its arguments; rules must be sorted by
// priority (see SortedRules).
func Decide(perms []string, rules []Rule, perm string, tok TokenScope) (transform string, ok bool) {
	if len(tok.Containers) == 0 {
		return "", false
	}
	for i, c := range tok.Containers {
		t, ok := decideIn(perms, rules, perm, tok.ID, c)
		if !ok {
			return "", false
		}
		if i == 0 || transformRank[t] < transformRank[transform] {
			transform = t
		}
	}
	return transform, true
}

// DecideWithin is Decide for a key held to ceilings as well (a session, by
// what its authorizer granted it and holds now): its own grants and every
// ceiling must allow, and the most restrictive transform applies. Rules
// must be sorted by priority.
func DecideWithin(perms []string, rules []Rule, ceilings []Grants, perm string, tok TokenScope) (string, bool) {
	transform, ok := Decide(perms, rules, perm, tok)
	if !ok {
		return "", false
	}
	for _, c := range ceilings {
		limit, ok := Decide(c.Permissions, c.Rules, perm, tok)
		if !ok {
			return "", false
		}
		if transformRank[limit] < transformRank[transform] {
			transform = limit
		}
	}
	return transform, true
}

func decideIn(perms []string, rules []Rule, perm, id, container string) (string, bool) {
	for _, r := range rules {
		if ruleMatches(r, id, container) && slices.Contains(r.Permissions, perm) {
			return r.Transform, true
		}
	}
	if slices.Contains(perms, perm) {
		return ImplicitTransform(perm), true
	}
	return "", false
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
