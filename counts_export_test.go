package tokenvault

import "context"

// FoldCounts does the count folder's work at once (foldCounts), so that
// tests need no timers.
func FoldCounts(ctx context.Context, v *Vault) (int, error) { return v.foldCounts(ctx) }
