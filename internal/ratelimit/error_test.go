package ratelimit

import (
	"errors"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestError: a refusal is RateLimited, says what was limited, and always
// asks to wait at least a millisecond.
func TestError(t *testing.T) {
	for _, tc := range []struct {
		wait, want time.Duration
	}{{0, time.Millisecond}, {-time.Second, time.Millisecond}, {1500 * time.Millisecond, 1500 * time.Millisecond}} {
		err := Error("with this key", tc.wait)
		if !errors.Is(err, unit.ErrRateLimited) || err.Message != "too many requests with this key; try again later" || err.RetryAfter != tc.want {
			t.Errorf("Error(%q, %v) = %+v, want RateLimited %q with RetryAfter %v", "with this key", tc.wait, err,
				"too many requests with this key; try again later", tc.want)
		}
	}
}
