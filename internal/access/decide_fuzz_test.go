package access

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// fuzzGrants is the grants input of FuzzAccessRuleConditions: a session's
// permissions and rules, and optionally the ceiling its authorizer (a
// private application) left it.
type fuzzGrants struct {
	Permissions []string `json:"permissions"`
	Rules       []Rule   `json:"rules"`
	Ceiling     *Grants  `json:"ceiling"`
}

// FuzzAccessRuleConditions drives the access rule engine (Decide) and the
// validation of grants (ValidateSessionGrants, ValidateGrants) with
// arbitrary rules. Its inputs are the grants as JSON (fuzzGrants), the
// permission asked for, and the token: its id and its containers separated
// by commas ("" is a token in no container).
//
// Whatever the input, nothing panics, decide is pure and deterministic,
// never allows a token in no container, never grants a permission that
// neither the direct permissions nor a matching rule hold, and never loses
// an allowed token when a direct permission is added. On grants that pass
// validation it also returns only redact, mask or reveal, agrees with a
// reference implementation written from the documentation, decides a
// token in several containers as the most restrictive of its containers,
// and holds a session to its ceiling. Seeds are in
// testdata/fuzz/FuzzAccessRuleConditions.
func FuzzAccessRuleConditions(f *testing.F) {
	f.Fuzz(func(t *testing.T, spec, perm, id, containers string) {
		var g fuzzGrants
		if err := json.Unmarshal([]byte(spec), &g); err != nil {
			return
		}
		var conts []string
		if containers != "" {
			conts = strings.Split(containers, ",")
		}
		tok := TokenScope{ID: id, Containers: conts}

		// Raw rules, as they might be in a record that was never validated:
		// only the invariants that do not depend on validation.
		checkDecide(t, "raw", g.Permissions, SortedRules(g.Rules), perm, tok, false)

		// Sessions: rules scoped by conditions.
		session := cloneRules(g.Rules)
		fe := unit.FieldErrors{}
		ValidateSessionGrants(g.Permissions, session, fe)
		checkFieldPaths(t, "ValidateSessionGrants", fe, len(g.Permissions), len(g.Rules))
		if len(fe) == 0 {
			checkValidGrants(t, Private, true, g.Permissions, session)
			checkDecide(t, "session", g.Permissions, SortedRules(session), perm, tok, true)
		}

		// Applications of every type: rules scoped by containers.
		for _, typ := range []ApplicationType{Private, Public, Management} {
			rules := cloneRules(g.Rules)
			afe := unit.FieldErrors{}
			ValidateGrants(typ, g.Permissions, rules, afe)
			checkFieldPaths(t, "ValidateGrants("+string(typ)+")", afe, len(g.Permissions), len(g.Rules))
			if len(afe) == 0 {
				checkValidGrants(t, typ, false, g.Permissions, rules)
				checkDecide(t, string(typ), g.Permissions, SortedRules(rules), perm, tok, true)
			}
		}

		// A session (with valid grants) held to its authorizer's grants.
		if g.Ceiling == nil || len(fe) > 0 {
			return
		}
		ceiling := Grants{Permissions: g.Ceiling.Permissions, Rules: cloneRules(g.Ceiling.Rules)}
		cfe := unit.FieldErrors{}
		ValidateGrants(Private, ceiling.Permissions, ceiling.Rules, cfe)
		if len(cfe) > 0 {
			return
		}
		ceiling.Rules = SortedRules(ceiling.Rules)
		sessionRules := SortedRules(session)
		got, ok := DecideWithin(g.Permissions, sessionRules, []Grants{ceiling}, perm, tok)
		own, ownOK := Decide(g.Permissions, sessionRules, perm, tok)
		limit, limitOK := Decide(ceiling.Permissions, ceiling.Rules, perm, tok)
		if ok != (ownOK && limitOK) {
			t.Fatalf("session Decide(%q, %+v) = %v; own grants %v, ceiling %v", perm, tok, ok, ownOK, limitOK)
		}
		if ok && got != mostRestrictive(own, limit) {
			t.Fatalf("session Decide(%q, %+v) = %q; own grants %q, ceiling %q", perm, tok, got, own, limit)
		}
	})
}

// checkDecide checks Decide(perms, rules, perm, tok); valid says the
// grants passed validation (distinct priorities, known transforms).
func checkDecide(t *testing.T, what string, perms []string, rules []Rule, perm string, tok TokenScope, valid bool) {
	t.Helper()
	permsBefore, rulesBefore, tokBefore := slices.Clone(perms), cloneRules(rules), TokenScope{ID: tok.ID, Containers: slices.Clone(tok.Containers)}
	transform, ok := Decide(perms, rules, perm, tok)
	if !reflect.DeepEqual(perms, permsBefore) || !reflect.DeepEqual(rules, rulesBefore) || !reflect.DeepEqual(tok, tokBefore) {
		t.Fatalf("%s: decide modified its arguments", what)
	}
	if t2, ok2 := Decide(perms, rules, perm, tok); t2 != transform || ok2 != ok {
		t.Fatalf("%s: Decide(%q, %+v) = %q, %v then %q, %v", what, perm, tok, transform, ok, t2, ok2)
	}
	for _, purpose := range []string{"", "support"} {
		d, e := DecideFor(perms, rules, perm, tok, purpose), Explain(perms, rules, perm, tok, purpose)
		if e.OK != d.OK || e.Transform != d.Transform || e.PurposeRequired != d.PurposeRequired || len(e.Containers) != len(tok.Containers) {
			t.Fatalf("%s: Explain(%q, %+v, %q) = %+v, DecideFor = %+v", what, perm, tok, purpose, e, d)
		}
	}
	if !ok {
		if transform != "" {
			t.Fatalf("%s: Decide(%q, %+v) denies with transform %q", what, perm, tok, transform)
		}
	} else {
		if len(tok.Containers) == 0 {
			t.Fatalf("%s: Decide(%q) allows a token in no container", what, perm)
		}
		// Every container is allowed by a matching rule that grants perm
		// or by a direct permission.
		for _, c := range tok.Containers {
			if slices.Contains(perms, perm) {
				continue
			}
			if !slices.ContainsFunc(rules, func(r Rule) bool {
				return slices.Contains(r.Permissions, perm) && refMatches(r, tok.ID, c)
			}) {
				t.Fatalf("%s: Decide(%q, %+v) allows container %q without a rule or permission granting it", what, perm, tok, c)
			}
		}
	}
	// Adding the permission directly never takes access away.
	if ok && !slices.Contains(perms, perm) {
		if _, ok2 := Decide(append(slices.Clone(perms), perm), rules, perm, tok); !ok2 {
			t.Fatalf("%s: Decide(%q, %+v) denies once %q is also a direct permission", what, perm, tok, perm)
		}
	}
	if !valid {
		return
	}
	if ok && !slices.Contains([]string{TransformRedact, TransformMask, TransformReveal}, transform) {
		t.Fatalf("%s: Decide(%q, %+v) = %q, not a transform", what, perm, tok, transform)
	}
	if want, wantOK := refDecide(perms, rules, perm, tok); want != transform || wantOK != ok {
		t.Fatalf("%s: Decide(%q, %+v) = %q, %v; reference %q, %v\nperms %q\nrules %+v", what, perm, tok, transform, ok, want, wantOK, perms, rules)
	}
	// Several containers: allowed in each, the most restrictive transform.
	if len(tok.Containers) > 1 {
		want, wantOK := "", true
		for i, c := range tok.Containers {
			tr, ok := Decide(perms, rules, perm, TokenScope{ID: tok.ID, Containers: []string{c}})
			if !ok {
				want, wantOK = "", false
				break
			}
			if i == 0 {
				want = tr
			} else {
				want = mostRestrictive(want, tr)
			}
		}
		if want != transform || wantOK != ok {
			t.Fatalf("%s: Decide(%q, %+v) = %q, %v; container by container %q, %v", what, perm, tok, transform, ok, want, wantOK)
		}
	}
}

// refDecide is decide as the documentation states it, written without
// relying on the order of rules: for each container the matching rule
// granting perm with the lowest priority decides, else a direct permission
// with its implicit transform; the most restrictive container wins.
// Priorities must be distinct.
func refDecide(perms []string, rules []Rule, perm string, tok TokenScope) (string, bool) {
	if len(tok.Containers) == 0 {
		return "", false
	}
	result := ""
	for i, c := range tok.Containers {
		var chosen *Rule
		for j := range rules {
			r := &rules[j]
			if slices.Contains(r.Permissions, perm) && refMatches(*r, tok.ID, c) && (chosen == nil || r.Priority < chosen.Priority) {
				chosen = r
			}
		}
		var tr string
		switch {
		case chosen != nil:
			tr = chosen.Transform
		case slices.Contains(perms, perm) && perm == PermTokenUse:
			tr = TransformReveal
		case slices.Contains(perms, perm) && perm == PermTokenDelete:
			tr = TransformRedact
		case slices.Contains(perms, perm):
			tr = TransformMask
		default:
			return "", false
		}
		if i == 0 {
			result = tr
		} else {
			result = mostRestrictive(result, tr)
		}
	}
	return result, true
}

// refMatches: a rule with a container covers that container and those
// below it; otherwise every condition must hold (none: every token).
func refMatches(r Rule, id, container string) bool {
	if r.Container != "" {
		return len(container) >= len(r.Container) && container[:len(r.Container)] == r.Container
	}
	for _, c := range r.Conditions {
		attr := map[string]string{AttributeID: id, AttributeContainer: container}
		v, known := attr[c.Attribute]
		if !known {
			return false
		}
		switch c.Operator {
		case OperatorEquals:
			if v != c.Value {
				return false
			}
		case OperatorStartsWith:
			if len(v) < len(c.Value) || v[:len(c.Value)] != c.Value {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func mostRestrictive(a, b string) string {
	order := []string{TransformRedact, TransformMask, TransformReveal}
	if slices.Index(order, b) < slices.Index(order, a) {
		return b
	}
	return a
}

// checkValidGrants checks that grants which passed validation are what
// decide relies on.
func checkValidGrants(t *testing.T, typ ApplicationType, session bool, perms []string, rules []Rule) {
	t.Helper()
	allowed := PermissionsFor(typ)
	if len(perms) == 0 && len(rules) == 0 {
		t.Fatalf("%s grants with neither permissions nor rules passed validation", typ)
	}
	seen := map[string]bool{}
	for _, p := range perms {
		if !slices.Contains(allowed, p) || seen[p] {
			t.Fatalf("%s permissions %q passed validation", typ, perms)
		}
		seen[p] = true
	}
	priorities := map[int]bool{}
	for _, r := range rules {
		if typ == Management {
			t.Fatalf("management grants with rules passed validation: %+v", rules)
		}
		if r.Priority < 1 || priorities[r.Priority] {
			t.Fatalf("rule priorities of %+v passed validation", rules)
		}
		priorities[r.Priority] = true
		if !slices.Contains([]string{TransformRedact, TransformMask, TransformReveal}, r.Transform) {
			t.Fatalf("rule %+v passed validation with transform %q", r, r.Transform)
		}
		if len(r.Permissions) == 0 {
			t.Fatalf("rule %+v without permissions passed validation", r)
		}
		for _, p := range r.Permissions {
			if !slices.Contains(allowed, p) || !strings.HasPrefix(p, "token:") {
				t.Fatalf("rule %+v passed validation with permission %q", r, p)
			}
		}
		if session {
			if r.Container != "" {
				t.Fatalf("session rule %+v with a container passed validation", r)
			}
			for _, c := range r.Conditions {
				if (c.Attribute != AttributeID && c.Attribute != AttributeContainer) ||
					(c.Operator != OperatorEquals && c.Operator != OperatorStartsWith) ||
					c.Value == "" || len(c.Value) > maxConditionValue {
					t.Fatalf("session rule %+v passed validation with condition %+v", r, c)
				}
			}
		} else if len(r.Conditions) > 0 || !ValidContainer(r.Container) {
			t.Fatalf("application rule %+v passed validation", r)
		}
	}
}

// checkFieldPaths checks that every error names a field of the request:
// permissions, permissions[i], rules or rules[i]... within range.
func checkFieldPaths(t *testing.T, what string, fe unit.FieldErrors, nPerms, nRules int) {
	t.Helper()
	for path, msgs := range fe {
		if len(msgs) == 0 {
			t.Fatalf("%s: field %q without a message", what, path)
		}
		ok := path == "permissions" || path == "rules"
		var i int
		var rest string
		if strings.HasPrefix(path, "permissions[") {
			ok = scanIndex(path[len("permissions["):], &i, &rest) && i < nPerms && rest == ""
		} else if strings.HasPrefix(path, "rules[") {
			ok = scanIndex(path[len("rules["):], &i, &rest) && i < nRules && (rest == "" || rest[0] == '.')
		}
		if !ok {
			t.Fatalf("%s: error on %q, not a field of the request (%d permissions, %d rules)", what, path, nPerms, nRules)
		}
	}
}

// scanIndex reads "<digits>]rest".
func scanIndex(s string, i *int, rest *string) bool {
	end := strings.IndexByte(s, ']')
	if end < 1 {
		return false
	}
	n := 0
	for _, c := range s[:end] {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	*i, *rest = n, s[end+1:]
	return true
}

// cloneRules copies rules deeply enough that validation (which fills in
// transforms) and decide cannot reach the original.
func cloneRules(rules []Rule) []Rule {
	if rules == nil {
		return nil
	}
	out := make([]Rule, len(rules))
	for i, r := range rules {
		r.Conditions = slices.Clone(r.Conditions)
		r.Permissions = slices.Clone(r.Permissions)
		out[i] = r
	}
	return out
}
