package outbound

import (
	"testing"
	"time"
)

// TestRetryAfter reads seconds and HTTP dates, caps them at 24 h, and
// ignores what it cannot read.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"":                              0,
		"7":                             7 * time.Second,
		"-3":                            0,
		"999999999":                     24 * time.Hour,
		"soon":                          0,
		"Wed, 02 Jan 2030 03:05:05 GMT": time.Minute,
		"Wed, 02 Jan 2030 03:00:00 GMT": 0,
		"Fri, 04 Jan 2030 03:04:05 GMT": 24 * time.Hour,
	} {
		if got := RetryAfter(h, now); got != want {
			t.Errorf("RetryAfter(%q) = %v, want %v", h, got, want)
		}
	}
}

// TestJitterWithinTwentyPercent: every wait is drawn within ±20%.
func TestJitterWithinTwentyPercent(t *testing.T) {
	for range 1000 {
		if d := Jitter(time.Second); d < 800*time.Millisecond || d > 1200*time.Millisecond {
			t.Fatalf("Jitter(1s) = %v", d)
		}
	}
}
