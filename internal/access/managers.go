package access

import "slices"

// A tenant must keep a full manager: a management application that holds
// every management permission directly and never expires, so that no
// change leaves it unable to manage itself. When a release adds
// management permissions, the full managers of before that release are
// given them (ManagementUpgrades), so they stay full managers.

// IsFullManager reports whether rec is a management application that
// holds every management permission directly and never expires.
func IsFullManager(rec *ApplicationRecord) bool {
	if rec.Type != Management || rec.ExpiresAt != nil {
		return false
	}
	for _, p := range PermissionsFor(Management) {
		if !slices.Contains(rec.Permissions, p) {
			return false
		}
	}
	return true
}

// ManagementUpgrades returns the management permissions each release
// added, in release order (a new slice; the order is stored as a count
// of upgrades done, so an upgrade is never reordered or removed).
func ManagementUpgrades() [][]string {
	return [][]string{
		// Webhook subscriptions.
		{PermWebhookCreate, PermWebhookRead, PermWebhookUpdate, PermWebhookDelete},
		// Who accessed a token's data.
		{PermTokenAccessRead},
		// Exports of a tenant's tokens.
		{PermTokenExport},
		// Erasure per data subject.
		{PermSubjectErase},
	}
}

// NeedsUpgrade reports whether rec is to be granted the permissions
// added by an upgrade: a management application that never expires,
// held every management permission of before the upgrade (a full manager
// then), and does not hold all of added already.
func NeedsUpgrade(rec *ApplicationRecord, before, added []string) bool {
	return rec.Type == Management && rec.ExpiresAt == nil && holdsAll(rec.Permissions, before) && !holdsAll(rec.Permissions, added)
}

func holdsAll(held, want []string) bool {
	for _, p := range want {
		if !slices.Contains(held, p) {
			return false
		}
	}
	return true
}

// NormalizeGrants returns copies of a request's permissions and rules,
// an absent list made empty (the records and answers show [] for none).
func NormalizeGrants(perms []string, rules []Rule) ([]string, []Rule) {
	if perms == nil {
		perms = []string{}
	}
	if rules == nil {
		rules = []Rule{}
	}
	return slices.Clone(perms), slices.Clone(rules)
}

// HasWithin reports whether a key with grants own, held to ceilings (a
// session, by its authorizer's), holds perm directly or through a rule in
// its own grants and in every ceiling. Which tokens a rule-scoped
// permission reaches is decided per token (DecideWithin).
func HasWithin(own Grants, ceilings []Grants, perm string) bool {
	if !own.Has(perm) {
		return false
	}
	for i := range ceilings {
		if !ceilings[i].Has(perm) {
			return false
		}
	}
	return true
}
