package access

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/tokenvault/tokenvault/internal/unit"
)

var containerPattern = regexp.MustCompile(`^/([A-Za-z0-9_-]+/)*$`)

// ValidContainer reports whether c is a container: it starts and ends with
// "/", and its segments are letters, digits, "-" and "_".
func ValidContainer(c string) bool { return len(c) <= 1000 && containerPattern.MatchString(c) }

// ValidateGrants checks the permissions and rules of an application of
// type typ, filling in defaults (a rule without transform redacts), and
// adds what is wrong to fe. Paths in the errors are relative to the
// request body.
func ValidateGrants(typ ApplicationType, perms []string, rules []Rule, fe unit.FieldErrors) {
	checkGrants(grantee{typ: typ, name: fmt.Sprintf("a %s application", typ)}, perms, rules, fe)
}

// ValidateSessionGrants checks what an authorizer grants a session: token
// permissions, and rules scoped by conditions rather than containers.
func ValidateSessionGrants(perms []string, rules []Rule, fe unit.FieldErrors) {
	checkGrants(grantee{typ: Private, name: "a session", session: true}, perms, rules, fe)
}

// grantee is who receives grants: an application of a type, or a session
// (which may hold what a private application may).
type grantee struct {
	typ     ApplicationType
	name    string
	session bool
}

func checkGrants(g grantee, perms []string, rules []Rule, fe unit.FieldErrors) {
	if len(perms) == 0 && len(rules) == 0 {
		fe.Add("permissions", "either permissions or rules must be non-empty")
	}
	checkPerms := func(path string, perms []string, tokenOnly bool) {
		seen := map[string]bool{}
		for i, p := range perms {
			pp := fmt.Sprintf("%s[%d]", path, i)
			types, known := holders[p]
			switch {
			case !known:
				fe.Add(pp, "unknown permission %q", p)
			case tokenOnly && !IsTokenPermission(p):
				fe.Add(pp, "access rules grant token permissions only, not %q", p)
			case !slices.Contains(types, g.typ):
				fe.Add(pp, "%s may not hold %q", g.name, p)
			case seen[p]:
				fe.Add(pp, "duplicate permission %q", p)
			}
			seen[p] = true
		}
	}
	checkPerms("permissions", perms, false)
	if len(rules) > 0 && g.typ == Management {
		fe.Add("rules", "management applications hold permissions, not access rules")
		return
	}
	priorities := map[int]bool{}
	for i := range rules {
		r := &rules[i]
		path := fmt.Sprintf("rules[%d]", i)
		if r.Priority < 1 {
			fe.Add(path+".priority", "must be 1 or more")
		} else if priorities[r.Priority] {
			fe.Add(path+".priority", "another rule has priority %d", r.Priority)
		}
		priorities[r.Priority] = true
		if g.session {
			checkSessionScope(path, r, fe)
		} else {
			checkApplicationScope(path, r, fe)
		}
		switch r.Transform {
		case "":
			r.Transform = TransformRedact
		case TransformRedact, TransformMask, TransformReveal:
		default:
			fe.Add(path+".transform", "must be redact, mask or reveal")
		}
		if len(r.Permissions) == 0 {
			fe.Add(path+".permissions", "must not be empty")
		}
		checkPerms(path+".permissions", r.Permissions, true)
		if len(r.Description) > 1000 {
			fe.Add(path+".description", "must be at most 1000 characters")
		}
		validateRulePurposes(path+".purposes", r.Purposes, fe)
	}
}

// checkApplicationScope: an application's rule names a container.
func checkApplicationScope(path string, r *Rule, fe unit.FieldErrors) {
	if len(r.Conditions) > 0 {
		fe.Add(path+".conditions", "conditions are for sessions; applications scope rules with container")
	}
	if r.Container == "" {
		fe.Add(path+".container", "is required")
	} else if !ValidContainer(r.Container) {
		fe.Add(path+".container", "must start and end with / and hold letters, digits, - and _ segments")
	}
}

// maxConditionValue bounds a condition's value, like a container.
const maxConditionValue = 1000

// checkSessionScope: a session's rule is scoped by conditions (none means
// every token), never by a container.
func checkSessionScope(path string, r *Rule, fe unit.FieldErrors) {
	if r.Container != "" {
		fe.Add(path+".container", "sessions scope rules with conditions, not container")
	}
	for j, c := range r.Conditions {
		cp := fmt.Sprintf("%s.conditions[%d]", path, j)
		if c.Attribute != AttributeID && c.Attribute != AttributeContainer {
			fe.Add(cp+".attribute", "must be id or container")
		}
		if c.Operator != OperatorEquals && c.Operator != OperatorStartsWith {
			fe.Add(cp+".operator", "must be equals or starts_with")
		}
		switch {
		case c.Value == "":
			fe.Add(cp+".value", "is required")
		case len(c.Value) > maxConditionValue:
			fe.Add(cp+".value", "must be at most %d characters", maxConditionValue)
		case unit.HasControl(c.Value): // an id or a container
			fe.Add(cp+".value", unit.NoControl)
		}
	}
}
