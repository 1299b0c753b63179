package vaulttest

import (
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
)

// WantRateLimited fails unless err is RateLimited with a RetryAfter in
// (0, max].
func WantRateLimited(t *testing.T, what string, err error, max time.Duration) {
	t.Helper()
	WantKind(t, what, err, tokenvault.RateLimited)
	e := err.(*tokenvault.Error)
	if e.RetryAfter <= 0 || e.RetryAfter > max {
		t.Errorf("%s: RetryAfter = %v, want in (0, %v]", what, e.RetryAfter, max)
	}
}
