package tokenvault

import "testing"

// TestAccessRuleEngine is the table of the pure rule engine, decide.
func TestAccessRuleEngine(t *testing.T) {
	const (
		read   = PermTokenRead
		use    = PermTokenUse
		create = PermTokenCreate
		del    = PermTokenDelete
		search = PermTokenSearch
		update = PermTokenUpdate
	)
	rule := func(prio int, container, transform string, perms ...string) AccessRule {
		return AccessRule{Priority: prio, Container: container, Transform: transform, Permissions: perms}
	}
	cond := func(prio int, transform string, perms []string, conds ...Condition) AccessRule {
		return AccessRule{Priority: prio, Conditions: conds, Transform: transform, Permissions: perms}
	}
	c := func(attr, op, value string) Condition { return Condition{Attribute: attr, Operator: op, Value: value} }
	tok := func(id string, containers ...string) tokenScope { return tokenScope{ID: id, Containers: containers} }
	pci := tok("tok-1", "/pci/high/")

	tests := []struct {
		name      string
		perms     []string
		rules     []AccessRule
		perm      string
		tok       tokenScope
		transform string
		ok        bool
	}{
		{"no grants", nil, nil, read, pci, "", false},
		{"direct read masks", []string{read}, nil, read, pci, "mask", true},
		{"direct create masks", []string{create}, nil, create, pci, "mask", true},
		{"direct update masks", []string{update}, nil, update, pci, "mask", true},
		{"direct search masks", []string{search}, nil, search, pci, "mask", true},
		{"direct use reveals", []string{use}, nil, use, pci, "reveal", true},
		{"direct delete redacts", []string{del}, nil, del, pci, "redact", true},
		{"direct permission is not another", []string{read}, nil, use, pci, "", false},
		{"rule on exact container", nil, []AccessRule{rule(1, "/pci/high/", "reveal", read)}, read, pci, "reveal", true},
		{"rule on parent container", nil, []AccessRule{rule(1, "/pci/", "mask", read)}, read, pci, "mask", true},
		{"rule on root covers all", nil, []AccessRule{rule(1, "/", "redact", read)}, read, pci, "redact", true},
		{"rule on sibling", nil, []AccessRule{rule(1, "/bank/", "reveal", read)}, read, pci, "", false},
		{"rule on prefix that is not a segment", nil, []AccessRule{rule(1, "/pc/", "reveal", read)}, read, pci, "", false},
		{"rule on child does not cover parent", nil, []AccessRule{rule(1, "/pci/high/deeper/", "reveal", read)}, read, pci, "", false},
		{"rule below /pci/ not /pcix/", nil, []AccessRule{rule(1, "/pci/", "reveal", read)}, read, tok("t", "/pcix/"), "", false},
		{"rule without the permission", nil, []AccessRule{rule(1, "/", "reveal", use)}, read, pci, "", false},
		{"lower priority number wins", nil, []AccessRule{rule(1, "/pci/", "mask", read), rule(2, "/", "reveal", read)}, read, pci, "mask", true},
		{"first match by priority, not by order given", nil, sortedRules([]AccessRule{rule(5, "/", "reveal", read), rule(2, "/pci/", "redact", read)}), read, pci, "redact", true},
		{"matching rule without permission is skipped", nil, []AccessRule{rule(1, "/pci/", "reveal", use), rule(2, "/", "mask", read)}, read, pci, "mask", true},
		{"non-matching first rule is skipped", nil, []AccessRule{rule(1, "/bank/", "reveal", read), rule(2, "/pci/", "mask", read)}, read, pci, "mask", true},
		{"several permissions in one rule (first)", nil, []AccessRule{rule(1, "/", "reveal", read, use, search)}, read, pci, "reveal", true},
		{"several permissions in one rule (last)", nil, []AccessRule{rule(1, "/", "reveal", read, use, search)}, search, pci, "reveal", true},
		{"rule before direct permission", []string{read}, []AccessRule{rule(1, "/pci/", "reveal", read)}, read, pci, "reveal", true},
		{"direct permission where no rule matches", []string{read}, []AccessRule{rule(1, "/bank/", "reveal", read)}, read, pci, "mask", true},
		{"two containers both allowed", nil, []AccessRule{rule(1, "/", "reveal", read)}, read, tok("t", "/a/", "/b/"), "reveal", true},
		{"two containers, most restrictive wins", nil, []AccessRule{rule(1, "/a/", "reveal", read), rule(2, "/b/", "mask", read)}, read, tok("t", "/a/", "/b/"), "mask", true},
		{"two containers, redact beats reveal", nil, []AccessRule{rule(1, "/a/", "redact", read), rule(2, "/b/", "reveal", read)}, read, tok("t", "/b/", "/a/"), "redact", true},
		{"two containers, one denied", nil, []AccessRule{rule(1, "/a/", "reveal", read)}, read, tok("t", "/a/", "/b/"), "", false},
		{"no containers", []string{read}, nil, read, tok("t"), "", false},
		{"session: id equals", nil, []AccessRule{cond(1, "reveal", []string{read}, c("id", "equals", "tok-1"))}, read, pci, "reveal", true},
		{"session: id equals other", nil, []AccessRule{cond(1, "reveal", []string{read}, c("id", "equals", "tok-2"))}, read, pci, "", false},
		{"session: id starts_with", nil, []AccessRule{cond(1, "mask", []string{read}, c("id", "starts_with", "tok-"))}, read, pci, "mask", true},
		{"session: container equals", nil, []AccessRule{cond(1, "reveal", []string{use}, c("container", "equals", "/pci/high/"))}, use, pci, "reveal", true},
		{"session: container equals parent is not equal", nil, []AccessRule{cond(1, "reveal", []string{use}, c("container", "equals", "/pci/"))}, use, pci, "", false},
		{"session: container starts_with", nil, []AccessRule{cond(1, "reveal", []string{use}, c("container", "starts_with", "/pci/"))}, use, pci, "reveal", true},
		{"session: all conditions must hold", nil, []AccessRule{cond(1, "reveal", []string{read}, c("container", "starts_with", "/pci/"), c("id", "equals", "other"))}, read, pci, "", false},
		{"session: two conditions hold", nil, []AccessRule{cond(1, "reveal", []string{read}, c("container", "starts_with", "/pci/"), c("id", "starts_with", "tok"))}, read, pci, "reveal", true},
		{"session: unknown attribute never matches", nil, []AccessRule{cond(1, "reveal", []string{read}, c("type", "equals", "card"))}, read, pci, "", false},
		{"session: unknown operator never matches", nil, []AccessRule{cond(1, "reveal", []string{read}, c("id", "contains", "tok"))}, read, pci, "", false},
		{"session: no conditions matches all", nil, []AccessRule{cond(1, "mask", []string{read})}, read, pci, "mask", true},
		{"session: priority between condition rules", nil, []AccessRule{cond(1, "redact", []string{read}, c("id", "equals", "tok-1")), cond(2, "reveal", []string{read})}, read, pci, "redact", true},
	}
	if len(tests) < 30 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tc := range tests {
		transform, ok := decide(tc.perms, tc.rules, tc.perm, tc.tok)
		if transform != tc.transform || ok != tc.ok {
			t.Errorf("%s: decide(%s) = %q, %v; want %q, %v", tc.name, tc.perm, transform, ok, tc.transform, tc.ok)
		}
	}
}

func TestSortedRulesKeepsInput(t *testing.T) {
	in := []AccessRule{{Priority: 3}, {Priority: 1}, {Priority: 2}}
	out := sortedRules(in)
	if in[0].Priority != 3 || out[0].Priority != 1 || out[2].Priority != 3 {
		t.Errorf("sortedRules: in %v, out %v", in, out)
	}
}
