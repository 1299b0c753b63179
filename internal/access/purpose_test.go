package access

import (
	"testing"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestDecideFor is the table of purposes in the rule engine: a rule with
// purposes applies only to calls naming one of them; without a purpose
// it is passed over and, when nothing else decides, the decision says a
// purpose was required.
func TestDecideFor(t *testing.T) {
	read, use := PermTokenRead, PermTokenUse
	rule := func(priority int, container, transform string, purposes []string, perms ...string) Rule {
		return Rule{Priority: priority, Container: container, Transform: transform, Permissions: perms, Purposes: purposes}
	}
	fraud, support := []string{"fraud-review"}, []string{"support", "chargeback"}
	byPurpose := SortedRules([]Rule{
		rule(1, "/pci/", TransformReveal, fraud, read, use),
		rule(2, "/pci/", TransformMask, support, read),
	})
	withDefault := SortedRules(append(byPurpose, rule(3, "/pci/", TransformRedact, nil, read)))
	pci := TokenScope{ID: "t1", Containers: []string{"/pci/high/"}}
	both := TokenScope{ID: "t2", Containers: []string{"/pci/high/", "/shop/"}}

	tests := []struct {
		name     string
		perms    []string
		rules    []Rule
		ceilings []Grants
		perm     string
		tok      TokenScope
		purpose  string
		want     Decision
	}{
		{name: "the purpose of the first rule reveals", rules: byPurpose, perm: read, tok: pci, purpose: "fraud-review",
			want: Decision{Transform: TransformReveal, OK: true}},
		{name: "the purpose of the second rule masks", rules: byPurpose, perm: read, tok: pci, purpose: "chargeback",
			want: Decision{Transform: TransformMask, OK: true}},
		{name: "a purpose no rule names is denied, not required", rules: byPurpose, perm: read, tok: pci, purpose: "billing",
			want: Decision{}},
		{name: "no purpose where only purpose rules reach: required", rules: byPurpose, perm: read, tok: pci,
			want: Decision{PurposeRequired: true}},
		{name: "a rule's permissions still count: support does not use", rules: byPurpose, perm: use, tok: pci, purpose: "support",
			want: Decision{}},
		{name: "no purpose, and no rule for the permission: not required", rules: byPurpose, perm: PermTokenDelete, tok: pci,
			want: Decision{}},
		{name: "no purpose with a rule without purposes after: that rule decides", rules: withDefault, perm: read, tok: pci,
			want: Decision{Transform: TransformRedact, OK: true}},
		{name: "no purpose with a direct permission: the implicit transform", perms: []string{read}, rules: byPurpose, perm: read, tok: pci,
			want: Decision{Transform: TransformMask, OK: true}},
		{name: "a purpose rule in one container of two: the other must allow", rules: byPurpose, perm: read, tok: both, purpose: "fraud-review",
			want: Decision{}},
		{name: "a ceiling with purposes holds a session to them", perms: []string{read},
			ceilings: []Grants{{Rules: byPurpose}}, perm: read, tok: pci, purpose: "support",
			want: Decision{Transform: TransformMask, OK: true}},
		{name: "a ceiling with purposes requires one", perms: []string{read},
			ceilings: []Grants{{Rules: byPurpose}}, perm: read, tok: pci,
			want: Decision{PurposeRequired: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := DecideWithinFor(tc.perms, tc.rules, tc.ceilings, tc.perm, tc.tok, tc.purpose)
			if got != tc.want {
				t.Errorf("DecideWithinFor(%q, purpose %q) = %+v, want %+v", tc.perm, tc.purpose, got, tc.want)
			}
		})
	}

	// Decide is DecideFor without a purpose: rules with purposes never
	// apply.
	if tr, ok := Decide(nil, byPurpose, read, pci); ok {
		t.Errorf("Decide with purpose rules only = %q, true; want a denial", tr)
	}
	// A rule with purposes on "/" does not reach every token for every
	// call.
	p := &Principal{Rules: SortedRules([]Rule{rule(1, "/", TransformReveal, fraud, read)}), Purpose: "fraud-review"}
	if p.ReachesAll(read) {
		t.Error("ReachesAll with a purpose rule on / = true, want false")
	}
}

// TestDecideOne: a call on one token gets Invalid naming purpose when a
// purpose is required, PermissionDenied otherwise; a principal's copy
// for a purpose leaves the original as it was.
func TestDecideOne(t *testing.T) {
	rules := SortedRules([]Rule{{Priority: 1, Container: "/", Transform: TransformReveal,
		Permissions: []string{PermTokenRead}, Purposes: []string{"fraud-review"}}})
	p := &Principal{Rules: rules}
	tok := TokenScope{ID: "t", Containers: []string{"/a/"}}
	_, err := p.DecideOne(PermTokenRead, tok)
	if e, ok := err.(*unit.Error); !ok || e.Kind != unit.Invalid || len(e.Fields["purpose"]) == 0 {
		t.Errorf("DecideOne without a purpose = %v, want Invalid naming purpose", err)
	}
	_, err = p.WithPurpose("support").DecideOne(PermTokenRead, tok)
	if unit.ErrorKind(err) != unit.PermissionDenied {
		t.Errorf("DecideOne for another purpose = %v, want PermissionDenied", err)
	}
	tr, err := p.WithPurpose("fraud-review").DecideOne(PermTokenRead, tok)
	if err != nil || tr != TransformReveal {
		t.Errorf("DecideOne for fraud-review = %q, %v; want reveal", tr, err)
	}
	if p.Purpose != "" {
		t.Errorf("WithPurpose changed the principal it copied: Purpose %q", p.Purpose)
	}
}

// TestValidatePurposeNames: what may name a purpose.
func TestValidatePurposeNames(t *testing.T) {
	for name, want := range map[string]bool{
		"fraud-review": true, "pci.7.2": true, "a": true, "0day": true, "x_y": true,
		"": false, "-a": false, "Fraud": false, "a b": false, "a,b": false, "é": false,
		"a234567890123456789012345678901234567890123456789012345678901234":  true,
		"a2345678901234567890123456789012345678901234567890123456789012345": false,
	} {
		if got := ValidPurposeName(name); got != want {
			t.Errorf("ValidPurposeName(%q) = %v, want %v", name, got, want)
		}
	}
}
