package unit

import "context"

type purposeKey struct{}

// WithPurpose returns a context whose calls name purpose as their purpose
// of access (an entry of the tenant's list of purposes; empty: none).
// Access rules with purposes apply only to calls naming one of theirs,
// and the purpose is written into the audit line of every access to a
// token's data the call makes.
func WithPurpose(ctx context.Context, purpose string) context.Context {
	return context.WithValue(ctx, purposeKey{}, purpose)
}

// PurposeOf returns the purpose of access ctx names, or "".
func PurposeOf(ctx context.Context) string {
	p, _ := ctx.Value(purposeKey{}).(string)
	return p
}
