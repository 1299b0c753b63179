package access

import "testing"

// BenchmarkDecidePurpose: the engine's cost for a call without a purpose
// on rules without purposes (every call before purposes), and for a call
// naming the purpose of the second of two purpose rules.
func BenchmarkDecidePurpose(b *testing.B) {
	tok := TokenScope{ID: "t1", Containers: []string{"/pci/high/"}}
	plain := SortedRules([]Rule{{Priority: 1, Container: "/pci/", Transform: TransformReveal, Permissions: []string{PermTokenRead}}})
	withPurposes := SortedRules([]Rule{
		{Priority: 1, Container: "/pci/", Transform: TransformReveal, Permissions: []string{PermTokenRead}, Purposes: []string{"fraud-review"}},
		{Priority: 2, Container: "/pci/", Transform: TransformMask, Permissions: []string{PermTokenRead}, Purposes: []string{"support", "chargeback"}},
	})
	b.Run("no purposes", func(b *testing.B) {
		for b.Loop() {
			DecideWithinFor(nil, plain, nil, PermTokenRead, tok, "")
		}
	})
	b.Run("purpose of the second rule", func(b *testing.B) {
		for b.Loop() {
			DecideWithinFor(nil, withPurposes, nil, PermTokenRead, tok, "chargeback")
		}
	})
}
