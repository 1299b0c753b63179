package access

import (
	"strings"
	"testing"
)

// TestExplain: Explain names the rule (or direct permission) that
// decided in each container, says why a refusal is one, and decides as
// DecideFor does (the fuzz target holds the two equal on any input).
func TestExplain(t *testing.T) {
	rules := SortedRules([]Rule{
		{Priority: 2, Container: "/", Transform: TransformMask, Permissions: []string{PermTokenRead}},
		{Priority: 1, Container: "/pci/", Transform: TransformReveal, Permissions: []string{PermTokenRead, PermTokenUse}},
		{Priority: 3, Container: "/hr/", Transform: TransformReveal, Permissions: []string{PermTokenUse}, Purposes: []string{"payroll"}},
	})
	perms := []string{PermTokenDelete}
	tests := []struct {
		name, perm, purpose string
		containers          []string
		ok                  bool
		transform           string
		priorities          []int // the deciding rule's priority in each container, 0 for none
		reason              string
		purposeRequired     bool
	}{
		{"first rule by priority", PermTokenRead, "", []string{"/pci/"}, true, TransformReveal, []int{1}, "", false},
		{"broader rule below", PermTokenRead, "", []string{"/eu/"}, true, TransformMask, []int{2}, "", false},
		{"most restrictive of two", PermTokenRead, "", []string{"/pci/", "/eu/"}, true, TransformMask, []int{1, 2}, "", false},
		{"direct permission", PermTokenDelete, "", []string{"/eu/"}, true, TransformRedact, []int{0}, "", false},
		{"no rule", PermTokenUse, "", []string{"/eu/"}, false, "", []int{0}, "no rule on /eu/ grants token:use and it is not a direct permission; rules grant it on /pci/, /hr/ only", false},
		{"one container refused", PermTokenUse, "", []string{"/pci/", "/eu/"}, false, "", []int{1, 0}, "no rule on /eu/", false},
		{"purpose required", PermTokenUse, "", []string{"/hr/"}, false, "", []int{0}, "only to calls naming one of its purposes", true},
		{"purpose named", PermTokenUse, "payroll", []string{"/hr/"}, true, TransformReveal, []int{3}, "", false},
		{"no container", PermTokenRead, "", nil, false, "", nil, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok := TokenScope{Containers: tc.containers}
			e := Explain(perms, rules, tc.perm, tok, tc.purpose)
			if e.OK != tc.ok || e.Transform != tc.transform || e.PurposeRequired != tc.purposeRequired {
				t.Fatalf("Explain(%q, %v) = ok %v %q purpose required %v, want %v %q %v", tc.perm, tc.containers, e.OK, e.Transform, e.PurposeRequired, tc.ok, tc.transform, tc.purposeRequired)
			}
			if d := DecideFor(perms, rules, tc.perm, tok, tc.purpose); d.OK != e.OK || d.Transform != e.Transform || d.PurposeRequired != e.PurposeRequired {
				t.Errorf("DecideFor = %+v, Explain = %+v", d, e)
			}
			if len(e.Containers) != len(tc.priorities) {
				t.Fatalf("Explain containers = %+v, want %d", e.Containers, len(tc.priorities))
			}
			reasons := ""
			for i, c := range e.Containers {
				got := 0
				if c.Rule != nil {
					got = c.Rule.Priority
				}
				if got != tc.priorities[i] {
					t.Errorf("Explain on %s decided by rule %d, want %d", c.Container, got, tc.priorities[i])
				}
				if c.Direct != (c.OK && c.Rule == nil) {
					t.Errorf("Explain on %s: direct %v with rule %v", c.Container, c.Direct, c.Rule)
				}
				reasons += c.Reason
			}
			if !strings.Contains(reasons, tc.reason) || (tc.reason == "") != (reasons == "") {
				t.Errorf("Explain reasons = %q, want %q", reasons, tc.reason)
			}
		})
	}
}
