package access

import (
	"fmt"
	"slices"
	"testing"
)

// TestDecide is the table of the access rule engine, as described in
// REFERENCE.md, "Containers and access rules".
func TestDecide(t *testing.T) {
	const (
		create = PermTokenCreate
		read   = PermTokenRead
		update = PermTokenUpdate
		del    = PermTokenDelete
		search = PermTokenSearch
		use    = PermTokenUse

		redact = TransformRedact
		mask   = TransformMask
		reveal = TransformReveal
	)
	// rule is an application rule, scoped by container.
	rule := func(priority int, container, transform string, perms ...string) Rule {
		return Rule{Priority: priority, Container: container, Transform: transform, Permissions: perms}
	}
	// session is a session rule, scoped by conditions.
	session := func(priority int, transform string, perms []string, conds ...Condition) Rule {
		return Rule{Priority: priority, Conditions: conds, Transform: transform, Permissions: perms}
	}
	cond := func(attribute, operator, value string) Condition {
		return Condition{Attribute: attribute, Operator: operator, Value: value}
	}
	// sorted is how every table entry builds its rules: decide expects them
	// in ascending priority.
	sorted := func(rules ...Rule) []Rule { return SortedRules(rules) }
	perms := func(p ...string) []string { return p }
	tok := func(id string, containers ...string) TokenScope {
		return TokenScope{ID: id, Containers: containers}
	}
	pciHigh := tok("tok-1", "/pci/high/")

	tests := []struct {
		name      string
		perms     []string
		rules     []Rule
		perm      string
		tok       TokenScope
		transform string
		ok        bool
	}{
		// No grants at all.
		{name: "nil rules and nil permissions deny", perm: read, tok: pciHigh},
		{name: "empty rules and empty permissions deny", perms: []string{}, rules: SortedRules([]Rule{}), perm: read, tok: pciHigh},
		{name: "empty permissions with a matching rule allow", perms: perms(), rules: sorted(rule(1, "/pci/", reveal, read)), perm: read, tok: pciHigh, transform: reveal, ok: true},

		// Direct permissions and their implicit transforms.
		{name: "direct token:create masks", perms: perms(create), perm: create, tok: pciHigh, transform: mask, ok: true},
		{name: "direct token:update masks", perms: perms(update), perm: update, tok: pciHigh, transform: mask, ok: true},
		{name: "direct token:read masks", perms: perms(read), perm: read, tok: pciHigh, transform: mask, ok: true},
		{name: "direct token:search masks", perms: perms(search), perm: search, tok: pciHigh, transform: mask, ok: true},
		{name: "direct token:use reveals", perms: perms(use), perm: use, tok: pciHigh, transform: reveal, ok: true},
		{name: "direct token:delete redacts", perms: perms(del), perm: del, tok: pciHigh, transform: redact, ok: true},
		{name: "direct permission does not grant another", perms: perms(read, create), perm: use, tok: pciHigh},
		{name: "direct permission applies to the root container", perms: perms(read), perm: read, tok: tok("t", "/"), transform: mask, ok: true},
		{name: "direct permission applies to any container", perms: perms(use), perm: use, tok: tok("t", "/bank/high/"), transform: reveal, ok: true},

		// Containers: nesting and segment boundaries.
		{name: "rule on the token's own container", rules: sorted(rule(1, "/pci/high/", reveal, read)), perm: read, tok: pciHigh, transform: reveal, ok: true},
		{name: "rule on /pci/ covers /pci/high/", rules: sorted(rule(1, "/pci/", mask, read)), perm: read, tok: pciHigh, transform: mask, ok: true},
		{name: "rule on /pci/ covers deeply nested container", rules: sorted(rule(1, "/pci/", reveal, read)), perm: read, tok: tok("t", "/pci/high/a/b/c/"), transform: reveal, ok: true},
		{name: "rule on root covers everything", rules: sorted(rule(1, "/", redact, read)), perm: read, tok: pciHigh, transform: redact, ok: true},
		{name: "rule on root covers root", rules: sorted(rule(1, "/", reveal, read)), perm: read, tok: tok("t", "/"), transform: reveal, ok: true},
		{name: "rule on /pci/ does not cover /pcix/", rules: sorted(rule(1, "/pci/", reveal, read)), perm: read, tok: tok("t", "/pcix/"), ok: false},
		{name: "rule on /pci/ does not cover /pc/", rules: sorted(rule(1, "/pci/", reveal, read)), perm: read, tok: tok("t", "/pc/"), ok: false},
		{name: "rule on /pc/ does not cover /pci/high/", rules: sorted(rule(1, "/pc/", reveal, read)), perm: read, tok: pciHigh, ok: false},
		{name: "rule on child does not cover parent", rules: sorted(rule(1, "/pci/high/", reveal, read)), perm: read, tok: tok("t", "/pci/"), ok: false},
		{name: "rule on child does not cover root", rules: sorted(rule(1, "/pci/", reveal, read)), perm: read, tok: tok("t", "/"), ok: false},
		{name: "rule on sibling container does not match", rules: sorted(rule(1, "/bank/", reveal, read)), perm: read, tok: pciHigh, ok: false},
		{name: "rule on nested customer container", rules: sorted(rule(1, "/customer-2/", mask, read)), perm: read, tok: tok("t", "/customer-2/pci/"), transform: mask, ok: true},

		// No matching rule.
		{name: "no rule matches the container", rules: sorted(rule(1, "/bank/", reveal, read), rule(2, "/general/", reveal, read)), perm: read, tok: pciHigh, ok: false},
		{name: "matching rule lacks the permission", rules: sorted(rule(1, "/", reveal, use, create)), perm: read, tok: pciHigh, ok: false},

		// Priorities.
		{name: "lower priority number wins", rules: sorted(rule(1, "/pci/", mask, read), rule(2, "/", reveal, read)), perm: read, tok: pciHigh, transform: mask, ok: true},
		{name: "lower priority number wins even for the broader container", rules: sorted(rule(1, "/", redact, read), rule(2, "/pci/high/", reveal, read)), perm: read, tok: pciHigh, transform: redact, ok: true},
		{name: "rules given out of order are sorted by SortedRules", rules: sorted(rule(9, "/", reveal, read), rule(3, "/pci/", redact, read), rule(5, "/pci/high/", mask, read)), perm: read, tok: pciHigh, transform: redact, ok: true},
		{name: "higher-priority matching rule without the permission is skipped", rules: sorted(rule(1, "/pci/", reveal, use), rule(2, "/", mask, read)), perm: read, tok: pciHigh, transform: mask, ok: true},
		{name: "higher-priority rule on another container is skipped", rules: sorted(rule(1, "/bank/", reveal, read), rule(2, "/pci/", mask, read)), perm: read, tok: pciHigh, transform: mask, ok: true},
		{name: "first rule granting the permission decides, later ones ignored", rules: sorted(rule(1, "/pci/", reveal, use), rule(2, "/pci/", redact, read), rule(3, "/pci/", reveal, read)), perm: read, tok: pciHigh, transform: redact, ok: true},
		{name: "large priority gaps keep their order", rules: sorted(rule(1000, "/", reveal, read), rule(10, "/", mask, read)), perm: read, tok: pciHigh, transform: mask, ok: true},

		// Several permissions in one rule.
		{name: "rule with several permissions grants the first", rules: sorted(rule(1, "/", reveal, read, use, search)), perm: read, tok: pciHigh, transform: reveal, ok: true},
		{name: "rule with several permissions grants the middle", rules: sorted(rule(1, "/", reveal, read, use, search)), perm: use, tok: pciHigh, transform: reveal, ok: true},
		{name: "rule with several permissions grants the last", rules: sorted(rule(1, "/", reveal, read, use, search)), perm: search, tok: pciHigh, transform: reveal, ok: true},
		{name: "rule with several permissions does not grant an unlisted one", rules: sorted(rule(1, "/", reveal, read, use, search)), perm: del, tok: pciHigh, ok: false},

		// Rules are tried before direct permissions.
		{name: "matching rule beats direct token:read mask", perms: perms(read), rules: sorted(rule(1, "/pci/", reveal, read)), perm: read, tok: pciHigh, transform: reveal, ok: true},
		{name: "matching rule beats direct token:use reveal", perms: perms(use), rules: sorted(rule(1, "/pci/", redact, use)), perm: use, tok: pciHigh, transform: redact, ok: true},
		{name: "direct permission used when no rule matches the container", perms: perms(read), rules: sorted(rule(1, "/bank/", reveal, read)), perm: read, tok: pciHigh, transform: mask, ok: true},
		{name: "direct permission used when matching rule lacks the permission", perms: perms(use), rules: sorted(rule(1, "/pci/", redact, read)), perm: use, tok: pciHigh, transform: reveal, ok: true},

		// Tokens in several containers.
		{name: "several containers all allowed by one rule", rules: sorted(rule(1, "/", reveal, read)), perm: read, tok: tok("t", "/a/", "/b/"), transform: reveal, ok: true},
		{name: "several containers: mask beats reveal", rules: sorted(rule(1, "/a/", reveal, read), rule(2, "/b/", mask, read)), perm: read, tok: tok("t", "/a/", "/b/"), transform: mask, ok: true},
		{name: "several containers: redact beats reveal whatever the order", rules: sorted(rule(1, "/a/", redact, read), rule(2, "/b/", reveal, read)), perm: read, tok: tok("t", "/b/", "/a/"), transform: redact, ok: true},
		{name: "several containers: redact beats mask", rules: sorted(rule(1, "/a/", mask, read), rule(2, "/b/", redact, read)), perm: read, tok: tok("t", "/a/", "/b/"), transform: redact, ok: true},
		{name: "several containers: most restrictive of three", rules: sorted(rule(1, "/a/", reveal, read), rule(2, "/b/", mask, read), rule(3, "/c/", reveal, read)), perm: read, tok: tok("t", "/a/", "/b/", "/c/"), transform: mask, ok: true},
		{name: "several containers: denied in the last means denied", rules: sorted(rule(1, "/a/", reveal, read)), perm: read, tok: tok("t", "/a/", "/b/"), ok: false},
		{name: "several containers: denied in the first means denied", rules: sorted(rule(1, "/b/", reveal, read)), perm: read, tok: tok("t", "/a/", "/b/"), ok: false},
		{name: "several containers: rule in one, direct permission in the other", perms: perms(read), rules: sorted(rule(1, "/a/", reveal, read)), perm: read, tok: tok("t", "/a/", "/b/"), transform: mask, ok: true},
		{name: "several containers: direct token:use reveals in both", perms: perms(use), perm: use, tok: tok("t", "/a/", "/b/"), transform: reveal, ok: true},

		// Tokens with no containers.
		{name: "no containers with direct permission is denied", perms: perms(read), perm: read, tok: tok("t"), ok: false},
		{name: "no containers with root rule is denied", rules: sorted(rule(1, "/", reveal, read)), perm: read, tok: tok("t"), ok: false},
		{name: "empty container list is denied", perms: perms(read), perm: read, tok: TokenScope{ID: "t", Containers: []string{}}, ok: false},

		// Session rules: conditions.
		{name: "session: id equals matches", rules: sorted(session(1, reveal, perms(read), cond(AttributeID, OperatorEquals, "tok-1"))), perm: read, tok: pciHigh, transform: reveal, ok: true},
		{name: "session: id equals another id does not match", rules: sorted(session(1, reveal, perms(read), cond(AttributeID, OperatorEquals, "tok-2"))), perm: read, tok: pciHigh, ok: false},
		{name: "session: id equals a prefix does not match", rules: sorted(session(1, reveal, perms(read), cond(AttributeID, OperatorEquals, "tok-"))), perm: read, tok: pciHigh, ok: false},
		{name: "session: id starts_with matches", rules: sorted(session(1, mask, perms(read), cond(AttributeID, OperatorStartsWith, "tok-"))), perm: read, tok: pciHigh, transform: mask, ok: true},
		{name: "session: id starts_with other prefix does not match", rules: sorted(session(1, mask, perms(read), cond(AttributeID, OperatorStartsWith, "card-"))), perm: read, tok: pciHigh, ok: false},
		{name: "session: container equals matches", rules: sorted(session(1, reveal, perms(use), cond(AttributeContainer, OperatorEquals, "/pci/high/"))), perm: use, tok: pciHigh, transform: reveal, ok: true},
		{name: "session: container equals parent does not match", rules: sorted(session(1, reveal, perms(use), cond(AttributeContainer, OperatorEquals, "/pci/"))), perm: use, tok: pciHigh, ok: false},
		{name: "session: container starts_with parent matches", rules: sorted(session(1, reveal, perms(use), cond(AttributeContainer, OperatorStartsWith, "/pci/"))), perm: use, tok: pciHigh, transform: reveal, ok: true},
		{name: "session: container starts_with sibling does not match", rules: sorted(session(1, reveal, perms(use), cond(AttributeContainer, OperatorStartsWith, "/bank/"))), perm: use, tok: pciHigh, ok: false},
		{name: "session: all conditions hold", rules: sorted(session(1, reveal, perms(read), cond(AttributeContainer, OperatorStartsWith, "/pci/"), cond(AttributeID, OperatorEquals, "tok-1"))), perm: read, tok: pciHigh, transform: reveal, ok: true},
		{name: "session: one failing condition fails the rule", rules: sorted(session(1, reveal, perms(read), cond(AttributeContainer, OperatorStartsWith, "/pci/"), cond(AttributeID, OperatorEquals, "other"))), perm: read, tok: pciHigh, ok: false},
		{name: "session: first condition failing fails the rule", rules: sorted(session(1, reveal, perms(read), cond(AttributeID, OperatorEquals, "other"), cond(AttributeContainer, OperatorStartsWith, "/pci/"))), perm: read, tok: pciHigh, ok: false},
		{name: "session: unknown attribute never matches", rules: sorted(session(1, reveal, perms(read), cond("type", OperatorEquals, "card"))), perm: read, tok: pciHigh, ok: false},
		{name: "session: unknown attribute with a holding condition never matches", rules: sorted(session(1, reveal, perms(read), cond(AttributeID, OperatorEquals, "tok-1"), cond("type", OperatorEquals, "card"))), perm: read, tok: pciHigh, ok: false},
		{name: "session: unknown operator never matches", rules: sorted(session(1, reveal, perms(read), cond(AttributeID, "contains", "tok"))), perm: read, tok: pciHigh, ok: false},
		{name: "session: unknown operator never matches even when value equals", rules: sorted(session(1, reveal, perms(read), cond(AttributeID, "not_equals", "tok-1"))), perm: read, tok: pciHigh, ok: false},
		{name: "session: operators are case-sensitive", rules: sorted(session(1, reveal, perms(read), cond(AttributeID, "EQUALS", "tok-1"))), perm: read, tok: pciHigh, ok: false},
		{name: "session: non-matching rule falls back to direct permission", perms: perms(read), rules: sorted(session(1, reveal, perms(read), cond(AttributeID, OperatorEquals, "tok-2"))), perm: read, tok: pciHigh, transform: mask, ok: true},
		{name: "session: priority between condition rules", rules: sorted(session(2, reveal, perms(read)), session(1, redact, perms(read), cond(AttributeID, OperatorEquals, "tok-1"))), perm: read, tok: pciHigh, transform: redact, ok: true},
		{name: "session: container condition checked per container", rules: sorted(session(1, reveal, perms(read), cond(AttributeContainer, OperatorStartsWith, "/pci/"))), perm: read, tok: tok("tok-1", "/pci/high/", "/bank/high/"), ok: false},
		{name: "session: per-container conditions combine to most restrictive", rules: sorted(session(1, reveal, perms(read), cond(AttributeContainer, OperatorEquals, "/a/")), session(2, mask, perms(read), cond(AttributeContainer, OperatorEquals, "/b/"))), perm: read, tok: tok("t", "/a/", "/b/"), transform: mask, ok: true},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases; want at least 40", len(tests))
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			transform, ok := Decide(tc.perms, tc.rules, tc.perm, tc.tok)
			if transform != tc.transform || ok != tc.ok {
				t.Errorf("Decide(%s) on %s in %q = %q, %v; want %q, %v",
					tc.perm, tc.tok.ID, tc.tok.Containers, transform, ok, tc.transform, tc.ok)
			}
		})
	}
}

func TestContainerContains(t *testing.T) {
	tests := []struct {
		outer, inner string
		want         bool
	}{
		{"/", "/", true},
		{"/", "/pci/", true},
		{"/", "/pci/high/", true},
		{"/pci/", "/pci/", true},
		{"/pci/", "/pci/high/", true},
		{"/pci/", "/pci/high/deeper/", true},
		{"/pci/high/", "/pci/high/", true},
		{"/pci/", "/pcix/", false},
		{"/pci/", "/pc/", false},
		{"/pc/", "/pci/", false},
		{"/pci/high/", "/pci/", false},
		{"/pci/", "/", false},
		{"/pci/", "/bank/", false},
		{"/pci/", "/bank/pci/", false},
		{"/customer-2/", "/customer-2/pci/", true},
		{"/customer-2/", "/customer-20/pci/", false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s in %s", tc.inner, tc.outer), func(t *testing.T) {
			if got := ContainerContains(tc.outer, tc.inner); got != tc.want {
				t.Errorf("ContainerContains(%q, %q) = %v; want %v", tc.outer, tc.inner, got, tc.want)
			}
		})
	}
}

func TestSortedRulesDoesNotModifyInput(t *testing.T) {
	in := []Rule{
		{Priority: 3, Container: "/c/"},
		{Priority: 1, Container: "/a/"},
		{Priority: 2, Container: "/b/"},
	}
	before := slices.Clone(in)
	out := SortedRules(in)

	for i := range in {
		if in[i].Priority != before[i].Priority || in[i].Container != before[i].Container {
			t.Fatalf("SortedRules modified its input: %v; want %v", in, before)
		}
	}
	gotPriorities := []int{}
	for _, r := range out {
		gotPriorities = append(gotPriorities, r.Priority)
	}
	if want := []int{1, 2, 3}; !slices.Equal(gotPriorities, want) {
		t.Errorf("SortedRules priorities = %v; want %v", gotPriorities, want)
	}
	if len(out) > 0 && &out[0] == &in[0] {
		t.Errorf("SortedRules returned the input's backing array; want a copy")
	}
	// Writing to the result must not reach the input either.
	out[0].Container = "/changed/"
	for _, r := range in {
		if r.Container == "/changed/" {
			t.Errorf("writing to SortedRules' result changed its input: %v", in)
		}
	}
	if got := SortedRules(nil); len(got) != 0 {
		t.Errorf("SortedRules(nil) = %v; want empty", got)
	}
}
