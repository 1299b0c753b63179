package store

import "context"

// ownTxKey marks a context with [WithOwnTransaction].
type ownTxKey struct{}

// WithOwnTransaction returns ctx marked so that a Store whose Update lets
// concurrent Updates share one transaction (a group commit) runs the
// Update made with it in a transaction of its own instead, beside the
// shared ones. It is for long background work (many reads, each a round
// trip to a remote store) that would otherwise hold up every caller
// queued behind it in the shared transaction. A store without a group
// commit ignores the mark; the Update's guarantees are the same either way.
func WithOwnTransaction(ctx context.Context) context.Context {
	return context.WithValue(ctx, ownTxKey{}, true)
}

// OwnTransaction reports whether ctx was marked by [WithOwnTransaction].
func OwnTransaction(ctx context.Context) bool {
	own, _ := ctx.Value(ownTxKey{}).(bool)
	return own
}
