package events

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"
)

// ParseDue splits a delivery queue entry's rest after its webhook,
// <due>/<id> (barrier.TenantKeys.WebhookDue), into the due time and the
// delivery id; ok is false for a malformed entry.
func ParseDue(rest string) (time.Time, string, bool) {
	hexAt, did, ok := strings.Cut(rest, "/")
	b, err := hex.DecodeString(hexAt)
	if !ok || err != nil || len(b) != 8 {
		return time.Time{}, "", false
	}
	var n int64
	for _, c := range b {
		n = n<<8 | int64(c)
	}
	return time.Unix(0, n).UTC(), did, true
}

// NewClaim is a fresh claim id: what an instance marks a delivery it
// attempts with, so that only its outcome under that claim is recorded.
func NewClaim() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
