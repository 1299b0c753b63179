package access

import "slices"

// Grants are permissions and rules, as held by a key: an application's
// own, a session's, and the ceiling its authorizer held. Their JSON is
// hashed (the root's grantsDigest), so its tags never change.
type Grants struct {
	Permissions []string `json:"permissions"`
	Rules       []Rule   `json:"rules"`
}

// Has reports whether g holds perm, directly or through any rule.
func (g *Grants) Has(perm string) bool {
	if slices.Contains(g.Permissions, perm) {
		return true
	}
	for _, r := range g.Rules {
		if slices.Contains(r.Permissions, perm) {
			return true
		}
	}
	return false
}
