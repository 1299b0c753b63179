package events

import (
	"testing"
	"time"
)

// TestLeaseOutlivesTheTimeout: a claim always outlives its attempt, so
// another instance cannot take a delivery that is still being attempted.
func TestLeaseOutlivesTheTimeout(t *testing.T) {
	if got := LeaseAbove(time.Minute, 2*time.Minute); got != 150*time.Second {
		t.Errorf("LeaseAbove(1m, 2m) = %v", got)
	}
	if got := LeaseAbove(2*time.Minute, 20*time.Second); got != 2*time.Minute {
		t.Errorf("LeaseAbove(2m, 20s) = %v", got)
	}
}

// The notice bounds: one per webhook per hour, five per tenant per hour,
// other tenants apart, and again once the hour has passed.
func TestNoticeLimiter(t *testing.T) {
	var l noticeLimiter
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if !l.allow("a", "w1", now) || l.allow("a", "w1", now.Add(time.Minute)) {
		t.Fatal("a webhook's second notice within the hour was not refused")
	}
	for i := 2; i <= noticesPerTenant; i++ {
		if !l.allow("a", "w"+string(rune('0'+i)), now) {
			t.Fatalf("notice %d of tenant a refused", i)
		}
	}
	if l.allow("a", "w9", now) {
		t.Error("tenant a's notice past its bound was sent")
	}
	if !l.allow("b", "w1", now) {
		t.Error("tenant b was refused for tenant a's notices")
	}
	if !l.allow("a", "w1", now.Add(noticeWindow)) {
		t.Error("a notice an hour later was refused")
	}
}
