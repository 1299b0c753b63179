package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/counts"
)

// FoldCounts does the count folder's work at once (internal/counts'
// FoldAll), so that tests need no timers.
func FoldCounts(ctx context.Context, v *Vault) (int, error) { return counts.FoldAll(ctx, v.barrier) }
