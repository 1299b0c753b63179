package approvals

import (
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestValidatePolicy: the fields a policy is refused for, and the zero
// policy (its removal) accepted.
func TestValidatePolicy(t *testing.T) {
	ok := Policy{Required: 2, Approvers: []string{"a", "b"}, Operations: []string{OpCreateManagement}, TTL: DefaultTTL}
	for _, tc := range []struct {
		name   string
		change func(*Policy)
		field  string
	}{
		{"valid", func(*Policy) {}, ""},
		{"removal", func(p *Policy) { *p = Policy{} }, ""},
		{"no approvers", func(p *Policy) { p.Approvers = nil }, "approvers"},
		{"m over n", func(p *Policy) { p.Required = 3 }, "required"},
		{"m zero", func(p *Policy) { p.Required = 0 }, "required"},
		{"repeated approver", func(p *Policy) { p.Approvers = []string{"a", "a"} }, "approvers"},
		{"unknown operation", func(p *Policy) { p.Operations = []string{OpUpdatePolicy} }, "operations"},
		{"short ttl", func(p *Policy) { p.TTL = time.Minute }, "ttl_seconds"},
		{"bulk without a count", func(p *Policy) { p.Operations = []string{OpDetokenizeBulk} }, "detokenize_over"},
		{"a count without bulk", func(p *Policy) { p.DetokenizeOver = 5 }, "detokenize_over"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ok
			tc.change(&p)
			fe := unit.FieldErrors{}
			ValidatePolicy(&p, fe)
			if tc.field == "" && len(fe) != 0 || tc.field != "" && fe[tc.field] == nil {
				t.Errorf("ValidatePolicy(%+v) = %v, want an error at %q (none for \"\")", p, fe, tc.field)
			}
		})
	}
}

// TestNeeds: no policy holds nothing; a policy holds its operations and,
// always, its own change; an approver is a named application only.
func TestNeeds(t *testing.T) {
	var none *Policy
	if none.Needs(OpCreateManagement) || none.Needs(OpUpdatePolicy) || none.IsApprover(unit.Actor{ID: "a", Type: unit.ActorApplication}) {
		t.Error("no policy holds something")
	}
	p := &Policy{Required: 1, Approvers: []string{"a"}, Operations: []string{OpRegenerateKey}}
	if !p.Needs(OpRegenerateKey) || !p.Needs(OpUpdatePolicy) || p.Needs(OpCreateManagement) {
		t.Errorf("Needs of %+v wrong", p)
	}
	if !p.IsApprover(unit.Actor{ID: "a", Type: unit.ActorApplication}) || p.IsApprover(unit.Actor{ID: "a", Type: unit.ActorSession}) ||
		p.IsApprover(unit.Actor{ID: "b", Type: unit.ActorApplication}) {
		t.Error("IsApprover wrong")
	}
}
