package vaulttest

import (
	"errors"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// WantPendingCap fails unless err is RateLimited with a RetryAfter.
func WantPendingCap(t *testing.T, what string, err error) {
	t.Helper()
	var te *tokenvault.Error
	if !errors.As(err, &te) || te.Kind != tokenvault.RateLimited || te.RetryAfter <= 0 || !strings.Contains(te.Message, "pending") {
		t.Fatalf("%s: %v, want RateLimited (pending deliveries) with a RetryAfter", what, err)
	}
}
