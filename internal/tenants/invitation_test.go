package tenants

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

func TestNewTokenAndLinkHash(t *testing.T) {
	a, b := NewToken(), NewToken()
	if !strings.HasPrefix(a, TokenPrefix) || a == b {
		t.Fatalf("NewToken() = %q, %q; want two different tokens starting %q", a, b, TokenPrefix)
	}
	k1, err := barrier.NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	k2, err := barrier.NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(LinkHash(k1, a), LinkHash(k1, a)) {
		t.Errorf("LinkHash(k1, %q) differs between calls", a)
	}
	if bytes.Equal(LinkHash(k1, a), LinkHash(k1, b)) {
		t.Errorf("LinkHash(k1, ·) is the same for two tokens")
	}
	if bytes.Equal(LinkHash(k1, a), LinkHash(k2, a)) {
		t.Errorf("LinkHash(·, %q) is the same under two keys: it must be keyed", a)
	}
	if bytes.Contains(LinkHash(k1, a), []byte(a)) {
		t.Errorf("LinkHash(k1, %q) holds the token", a)
	}
}

func TestResentExpiry(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		old  time.Time
		want time.Time
	}{
		{"pending: extended from its expiry", now.Add(time.Hour), now.Add(time.Hour + Lifetime)},
		{"expired: a full lifetime from now", now.Add(-time.Hour), now.Add(Lifetime)},
		{"expiring now", now, now.Add(Lifetime)},
	} {
		if got := ResentExpiry(tc.old, now); !got.Equal(tc.want) {
			t.Errorf("%s: ResentExpiry(%v, %v) = %v, want %v", tc.name, tc.old, now, got, tc.want)
		}
	}
}
