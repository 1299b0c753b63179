package tokens

import (
	"slices"
	"testing"
)

// TestFingerprintMemory adds, finds and removes tokens sharing a slot,
// with generated and custom ids, the same token twice, and other tenants.
func TestFingerprintMemory(t *testing.T) {
	const fp = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	const sameSlot = "0011223344556677ffffffffffffffffffffffffffffffffffffffffffffffff"
	a := "0190b8e0-0000-7000-8000-000000000001"
	b := "0190b8e0-0000-7000-8000-000000000002"
	var m FingerprintMemory
	for _, e := range []fingerprintEntry{{"t", fp, a}, {"t", sameSlot, b}, {"t", fp, "order:1"}, {"u", fp, b}} {
		if !m.add(e) {
			t.Errorf("add(%v) = false for a new entry", e)
		}
	}
	if m.add(fingerprintEntry{"t", fp, a}) || m.add(fingerprintEntry{"t", fp, "order:1"}) {
		t.Errorf("add of an entry already there = true")
	}
	if got, want := m.ids("t", fp), []string{a, b, "order:1"}; !slices.Equal(got, want) {
		t.Errorf("ids = %v, want %v (one slot, candidates for both fingerprints)", got, want)
	}
	m.remove(fingerprintEntry{"t", fp, a})
	m.remove(fingerprintEntry{"t", fp, "order:1"})
	m.remove(fingerprintEntry{"t", fp, "missing"})
	if got, want := m.ids("t", fp), []string{b}; !slices.Equal(got, want) {
		t.Errorf("ids after removals = %v, want %v", got, want)
	}
	if got := m.ids("u", fp); !slices.Equal(got, []string{b}) {
		t.Errorf("other tenant's ids = %v", got)
	}
	m.DropTenant("u")
	if got := m.ids("u", fp); len(got) != 0 {
		t.Errorf("ids of a dropped tenant = %v", got)
	}
	if m.ids("nobody", "x") != nil {
		t.Errorf("ids of an unknown tenant are not empty")
	}
}
