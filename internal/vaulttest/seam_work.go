package vaulttest

import (
	"context"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Update runs fn in a unit of work of v, as v's methods run theirs (its
// hooks, audit lines and events included): a test writes a store as an
// older release left it, or a state no public method makes, with the
// features' own record types.
func Update(ctx context.Context, v *tokenvault.Vault, fn func(t *unit.Tx) error) error {
	return testseam.Of(v).Work.Update(ctx, fn)
}

// View runs fn in a read-only unit of work of v: a test reads a record as
// it is stored, with what a public method leaves out.
func View(ctx context.Context, v *tokenvault.Vault, fn func(t *unit.Tx) error) error {
	return testseam.Of(v).Work.View(ctx, fn)
}

// ExpiryKinds are the sweeper's handlers of v, by the kind of schedule
// entry, as v gathered them from its features.
func ExpiryKinds(v *tokenvault.Vault) map[string]unit.ExpiryKind {
	return testseam.Of(v).ExpiryKinds
}
