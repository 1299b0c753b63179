package tokenvault

import (
	"testing"
	"time"
)

// TestLeaseOutlivesTheTimeout: a claim always outlives its attempt, so
// another instance cannot take a delivery that is still being attempted.
func TestLeaseOutlivesTheTimeout(t *testing.T) {
	if got := leaseAbove(time.Minute, 2*time.Minute); got != 150*time.Second {
		t.Errorf("leaseAbove(1m, 2m) = %v", got)
	}
	if got := leaseAbove(2*time.Minute, 20*time.Second); got != 2*time.Minute {
		t.Errorf("leaseAbove(2m, 20s) = %v", got)
	}
}

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
		if got := retryAfter(h, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", h, got, want)
		}
	}
}

// TestJitterWithinTwentyPercent: every wait is drawn within ±20%.
func TestJitterWithinTwentyPercent(t *testing.T) {
	for range 1000 {
		if d := jitter(time.Second); d < 800*time.Millisecond || d > 1200*time.Millisecond {
			t.Fatalf("jitter(1s) = %v", d)
		}
	}
}

// TestDeliveryBody is the envelope around the stored event, verbatim.
func TestDeliveryBody(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 600, time.UTC)
	got := string(deliveryBody([]byte(`{"id":"e","type":"webhook.test"}`), at))
	want := `{"event":{"id":"e","type":"webhook.test"},"delivered_at":"2030-01-02T03:04:05.0000006Z"}`
	if got != want {
		t.Errorf("deliveryBody = %s, want %s", got, want)
	}
}
