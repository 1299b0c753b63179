package access

import (
	"fmt"
	"slices"
	"strings"
)

// Explanation is DecideFor's decision on one permission with what made
// it, container by container: the answer of an access preview, which
// shows an operator what a key would see without reading a token.
type Explanation struct {
	Permission string
	// OK and Transform are DecideFor's decision; PurposeRequired too.
	OK              bool
	Transform       string
	PurposeRequired bool
	// Containers are the token's containers, each with what decided it
	// there (a token is allowed only when allowed in every one).
	Containers []ContainerExplanation
}

// ContainerExplanation is what decided a permission in one container.
type ContainerExplanation struct {
	Container string
	OK        bool
	Transform string
	// Rule is the rule that decided, nil when a direct permission did
	// (Direct) or nothing did.
	Rule   *Rule
	Direct bool
	// Reason says, when refused, why.
	Reason string
}

// Explain is DecideFor(perms, rules, perm, tok, purpose) with its
// reasons; its OK, Transform and PurposeRequired are always
// DecideFor's. Rules must be sorted by priority (SortedRules). A pure
// function, like DecideFor.
func Explain(perms []string, rules []Rule, perm string, tok TokenScope, purpose string) Explanation {
	e := Explanation{Permission: perm}
	refused := false
	for _, c := range tok.Containers {
		i, t, ok, missing := decidingRule(perms, rules, perm, tok.ID, c, purpose)
		ce := ContainerExplanation{Container: c, OK: ok, Transform: t, Direct: ok && i < 0}
		if i >= 0 {
			r := rules[i]
			ce.Rule = &r
		}
		if !ok {
			ce.Reason = refusal(rules, perm, c, purpose, missing)
			if !refused {
				e.PurposeRequired = missing
			}
			refused = true
		} else if !refused && (e.Transform == "" || transformRank[t] < transformRank[e.Transform]) {
			e.Transform = t
		}
		e.Containers = append(e.Containers, ce)
	}
	e.OK = len(tok.Containers) > 0 && !refused
	if !e.OK {
		e.Transform = ""
	}
	return e
}

// refusal says why nothing granted perm in container c.
func refusal(rules []Rule, perm, c, purpose string, missing bool) string {
	if missing {
		return fmt.Sprintf("a rule grants %s on %s only to calls naming one of its purposes; this call names none", perm, c)
	}
	var on []string
	for _, r := range rules {
		if slices.Contains(r.Permissions, perm) && r.Container != "" && !slices.Contains(on, r.Container) {
			on = append(on, r.Container)
		}
	}
	msg := fmt.Sprintf("no rule on %s grants %s and it is not a direct permission", c, perm)
	if purpose != "" {
		msg = fmt.Sprintf("no rule on %s grants %s for purpose %s and it is not a direct permission", c, perm, purpose)
	}
	if len(on) > 0 {
		msg += "; rules grant it on " + strings.Join(on, ", ") + " only"
	}
	return msg
}
