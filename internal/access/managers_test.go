package access

import (
	"slices"
	"testing"
	"time"
)

func TestIsFullManager(t *testing.T) {
	all := PermissionsFor(Management)
	expires := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		rec  ApplicationRecord
		want bool
	}{
		{"every management permission", ApplicationRecord{Type: Management, Permissions: all}, true},
		{"one missing", ApplicationRecord{Type: Management, Permissions: all[1:]}, false},
		{"expiring", ApplicationRecord{Type: Management, Permissions: all, ExpiresAt: &expires}, false},
		{"private", ApplicationRecord{Type: Private, Permissions: all}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsFullManager(&tc.rec); got != tc.want {
				t.Errorf("IsFullManager(%+v) = %v, want %v", tc.rec, got, tc.want)
			}
		})
	}
}

func TestNeedsUpgrade(t *testing.T) {
	upgrades := ManagementUpgrades()
	added := upgrades[len(upgrades)-1]
	before := slices.DeleteFunc(PermissionsFor(Management), func(p string) bool { return slices.Contains(added, p) })
	expires := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		rec  ApplicationRecord
		want bool
	}{
		{"full manager of before", ApplicationRecord{Type: Management, Permissions: before}, true},
		{"already upgraded", ApplicationRecord{Type: Management, Permissions: append(slices.Clone(before), added...)}, false},
		{"partial manager", ApplicationRecord{Type: Management, Permissions: before[1:]}, false},
		{"expiring", ApplicationRecord{Type: Management, Permissions: before, ExpiresAt: &expires}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := NeedsUpgrade(&tc.rec, before, added); got != tc.want {
				t.Errorf("NeedsUpgrade(%v) = %v, want %v", tc.rec.Permissions, got, tc.want)
			}
		})
	}
	for i, perms := range upgrades {
		for _, p := range perms {
			if !slices.Contains(ManagementPermissions(), p) {
				t.Errorf("upgrade %d adds %q, not a management permission", i, p)
			}
		}
	}
}

func TestNormalizeGrants(t *testing.T) {
	perms, rules := NormalizeGrants(nil, nil)
	if perms == nil || rules == nil || len(perms) != 0 || len(rules) != 0 {
		t.Fatalf("NormalizeGrants(nil, nil) = %#v, %#v, want empty, not nil", perms, rules)
	}
	in := []string{PermTokenRead}
	perms, _ = NormalizeGrants(in, nil)
	perms[0] = PermTokenUse
	if in[0] != PermTokenRead {
		t.Error("NormalizeGrants returned its input, not a copy")
	}
}

func TestHasWithin(t *testing.T) {
	own := Grants{Rules: []Rule{{Priority: 1, Container: "/", Permissions: []string{PermTokenRead}}}}
	tests := []struct {
		name     string
		ceilings []Grants
		perm     string
		want     bool
	}{
		{"own rule, no ceiling", nil, PermTokenRead, true},
		{"not held", nil, PermTokenUse, false},
		{"ceiling holds it directly", []Grants{{Permissions: []string{PermTokenRead}}}, PermTokenRead, true},
		{"one ceiling lacks it", []Grants{{Permissions: []string{PermTokenRead}}, {Permissions: []string{PermTokenUse}}}, PermTokenRead, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := HasWithin(own, tc.ceilings, tc.perm); got != tc.want {
				t.Errorf("HasWithin(%q) = %v, want %v", tc.perm, got, tc.want)
			}
		})
	}
}
