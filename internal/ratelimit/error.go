package ratelimit

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// Error is the RateLimited error of a call refused by a limit: "too many
// requests " + what + "; try again later", with retryAfter as its
// RetryAfter, at least a millisecond: a refused call always says to wait
// (over HTTP, at least the one second Retry-After rounds it up to).
func Error(what string, retryAfter time.Duration) *unit.Error {
	return &unit.Error{Kind: unit.RateLimited, Message: "too many requests " + what + "; try again later", RetryAfter: max(retryAfter, time.Millisecond)}
}
