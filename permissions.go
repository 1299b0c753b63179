package tokenvault

import (
	"context"
	"slices"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Permission describes one permission and the application types that may
// hold it.
type Permission struct {
	Type             string            `json:"type"`
	ApplicationTypes []ApplicationType `json:"application_types"`
}

// ListPermissions lists the permissions an application of type typ may hold
// (every permission when typ is empty), so a tool can offer only valid
// choices. Any valid key may call it; nothing of the tenant is revealed.
//
// Returns Invalid for an unknown type, Unauthenticated for a key that is
// missing, unknown or expired, RateLimited over a rate limit, or Internal.
func (v *Vault) ListPermissions(ctx context.Context, key Credential, typ ApplicationType) ([]Permission, error) {
	if typ != "" && !validApplicationType(typ) {
		return nil, unit.InvalidField("application_type", "must be private, public or management")
	}
	err := v.view(ctx, func(t *txn) error {
		_, err := t.authenticate(key)
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []Permission
	for name, holders := range access.Holders() {
		if typ == "" || slices.Contains(holders, typ) {
			out = append(out, Permission{Type: name, ApplicationTypes: slices.Clone(holders)})
		}
	}
	slices.SortFunc(out, func(a, b Permission) int {
		switch {
		case a.Type < b.Type:
			return -1
		case a.Type > b.Type:
			return 1
		}
		return 0
	})
	return out, nil
}
