package tokenvault

import (
	"context"
	"slices"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ElementOrigins returns the origins allowed to embed the hosted elements
// (package elements) of the public application whose key is key: its
// AllowedOrigins, possibly none. It is what the elements' frames need to
// name their frame-ancestors, and nothing more of the application. It
// reads nothing but the key's application and logs nothing: a public key
// is in every end user's browser, and every frame load asks.
//
// Returns Unauthenticated for a key that is missing, unknown or expired,
// PermissionDenied for the key of an application that is not public or
// of a session, RateLimited over a rate limit, and Internal.
func (v *Vault) ElementOrigins(ctx context.Context, key Credential) ([]string, error) {
	var out []string
	err := v.view(ctx, func(t *txn) error {
		p, err := t.authenticate(key)
		if err != nil {
			return err
		}
		if p.ActorType != ActorApplication || p.AppType != access.Public {
			return unit.Errorf(unit.PermissionDenied, "hosted elements are framed with a public application's key")
		}
		rec, err := access.MustApplication(t.Tx, p.TenantID, p.ActorID)
		if err != nil {
			return err
		}
		out = slices.Clone(rec.AllowedOrigins)
		return nil
	})
	return out, err
}
