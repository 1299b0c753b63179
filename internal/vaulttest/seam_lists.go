package vaulttest

import (
	"context"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// BuildListsOnce runs one transaction of the build of v's token lists (a
// store written before them is listed at Open, in batches), from the
// start, after making the lists forget what they knew of the shape
// registries: a test strips a store beneath an open Vault, then cuts its
// build short after one batch to see that the next Open goes on from there.
func BuildListsOnce(ctx context.Context, v *tokenvault.Vault) error {
	lists := testseam.Of(v).Lists
	lists.Forget()
	return testseam.Of(v).Work.Update(ctx, func(t *unit.Tx) error {
		var st, before tokens.ListBuild
		return lists.BuildOnce(t, &st, &before)
	})
}
