package outbound

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// MaxRetryAfter caps a receiver's Retry-After.
const MaxRetryAfter = 24 * time.Hour

// RetryAfter reads a Retry-After header (seconds, or an HTTP date) at
// now, capped at MaxRetryAfter; 0 when absent or unreadable.
func RetryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.ParseInt(h, 10, 64); err == nil {
		if s < 0 {
			return 0
		}
		d = time.Duration(min(s, int64(MaxRetryAfter/time.Second))) * time.Second
	} else if at, err := http.ParseTime(h); err == nil {
		d = at.Sub(now)
	}
	return max(min(d, MaxRetryAfter), 0)
}

// Jitter is d drawn between 80% and 120% of its value, so receivers that
// failed together are not retried in lockstep.
func Jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}
