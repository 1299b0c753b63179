package vaulttest

import (
	"context"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/testseam"
)

// The helpers in seam*.go reach what no public method of a Vault shows,
// through internal/testseam: each runs the Vault's own code (its linker,
// indexer, count folder, units of work), so an assertion on them fails
// when that code breaks.

// FoldCounts does the count folder's work at once, so that tests need no
// timers; it returns how many rows it folded.
func FoldCounts(ctx context.Context, v *tokenvault.Vault) (int, error) {
	return testseam.Of(v).FoldCounts(ctx)
}

// LimiterSizes reports how many buckets each rate limit of v holds, so a
// test can check that idle ones are forgotten.
func LimiterSizes(v *tokenvault.Vault) map[string]int { return testseam.Of(v).LimiterSizes() }

// ResizeAuthCache bounds v's authentication cache to n entries, so that a
// test can exceed the bound with a few hundred keys rather than
// access.MaxAuthEntries.
func ResizeAuthCache(v *tokenvault.Vault, n int) { testseam.Of(v).ResizeAuthCache(n) }

// AuthCacheLen reports how many entries v's authentication cache holds.
func AuthCacheLen(v *tokenvault.Vault) int { return testseam.Of(v).AuthCacheLen() }

// Instance is v's instance id: the write path tests tell the rows only
// this Vault writes by it.
func Instance(v *tokenvault.Vault) string { return testseam.Of(v).Instance }
