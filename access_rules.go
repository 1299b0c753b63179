package tokenvault

import (
	"slices"
	"strings"
)

// tokenScope is what access rules look at on a token: its id and its
// containers.
type tokenScope struct {
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

// implicitTransform is the transform of a permission granted directly,
// without rules: reading-like permissions see the mask, token:use sees the
// plaintext (it exists to detokenize), token:delete shows no data.
func implicitTransform(perm string) string {
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

// decide is the access rule engine: given a key's direct permissions and
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
// decide is a pure function of its arguments; rules must be sorted by
// priority (see sortedRules).
func decide(perms []string, rules []AccessRule, perm string, tok tokenScope) (transform string, ok bool) {
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

func decideIn(perms []string, rules []AccessRule, perm, id, container string) (string, bool) {
	for _, r := range rules {
		if ruleMatches(r, id, container) && slices.Contains(r.Permissions, perm) {
			return r.Transform, true
		}
	}
	if slices.Contains(perms, perm) {
		return implicitTransform(perm), true
	}
	return "", false
}

// ruleMatches reports whether r applies to the token with this id in this
// container. A rule with neither container nor conditions (possible only
// for sessions) applies to every token.
func ruleMatches(r AccessRule, id, container string) bool {
	if r.Container != "" {
		return containerContains(r.Container, container)
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

// containerContains reports whether container outer contains inner: "/pci/"
// contains "/pci/" and "/pci/high/", not "/pcix/". Both end in "/", so a
// prefix test respects segment boundaries.
func containerContains(outer, inner string) bool { return strings.HasPrefix(inner, outer) }

// sortedRules returns rules in ascending priority, the order decide reads
// them in.
func sortedRules(rules []AccessRule) []AccessRule {
	rules = slices.Clone(rules)
	slices.SortStableFunc(rules, func(a, b AccessRule) int { return a.Priority - b.Priority })
	return rules
}

// decide applies p's grants to one token. A session is also held to its
// authorizer's grants: all must allow, and the most restrictive transform
// applies.
func (p *principal) decide(perm string, tok tokenScope) (string, bool) {
	transform, ok := decide(p.permissions, p.rules, perm, tok)
	if !ok {
		return "", false
	}
	for _, c := range p.ceilings {
		limit, ok := decide(c.Permissions, c.Rules, perm, tok)
		if !ok {
			return "", false
		}
		if transformRank[limit] < transformRank[transform] {
			transform = limit
		}
	}
	return transform, true
}
