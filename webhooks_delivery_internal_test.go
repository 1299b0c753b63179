package tokenvault

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
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

// A failed attempt's error, which the tenant reads in its deliveries,
// names what went wrong in a closed vocabulary: never the transport's own
// text, which carries the Vault's network (its resolver's address here).
func TestTransportErrorTellsNothingOfTheVaultsNetwork(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		err  error
		want string
	}{
		{&url.Error{Op: "Post", URL: "https://hooks.example.com/in", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "hooks.example.com", Server: "10.255.255.53:53", IsNotFound: true}}},
			"the webhook's host name does not resolve"},
		{&url.Error{Op: "Post", URL: "https://10.1.2.3/in", Err: &net.OpError{Op: "dial", Net: "tcp", Err: errPrivateDestination}},
			"the webhook's host resolves to a private, loopback or link-local address"},
		{&url.Error{Op: "Post", URL: "https://192.0.2.7/in", Err: &net.OpError{Op: "dial", Net: "tcp",
			Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 443}, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}},
			"the receiver refused the connection"},
		{&url.Error{Op: "Post", URL: "https://hooks.example.com/in", Err: errors.New("read tcp 10.0.0.5:41234->192.0.2.7:443: reset")},
			"the receiver could not be reached"},
	} {
		got := transportError(ctx, c.err, time.Second)
		if got != c.want {
			t.Errorf("transportError(%v) = %q, want %q", c.err, got, c.want)
		}
		for _, leak := range []string{"10.255", "10.0.0.5", "hooks.example.com", "192.0.2.7", "10.1.2.3"} {
			if strings.Contains(got, leak) {
				t.Errorf("transportError(%v) = %q tells %s", c.err, got, leak)
			}
		}
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
