package httpapi

import (
	"net/http"
	"strings"
)

// maxRequestIDLength bounds the X-Request-Id a call's events carry.
const maxRequestIDLength = 128

// traceIDOf is the trace id of r for tokenvault.CallInfo.TraceID (the
// trace_id of the webhook events the request's changes emit): its
// X-Request-Id header when that is 1 to 128 printable ASCII characters
// (no space), else the trace id of a valid W3C traceparent header (32
// lowercase hex digits, not all zero), else "". A header that is neither
// is ignored, never refused.
func traceIDOf(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= maxRequestIDLength && printableToken(id) {
		return id
	}
	return traceparentID(r.Header.Get("Traceparent"))
}

// printableToken reports whether s is printable ASCII without spaces.
func printableToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// traceparentID is the trace id of a W3C traceparent header value
// (version-traceid-parentid-flags), or "" when h is not one.
func traceparentID(h string) string {
	parts := strings.Split(strings.TrimSpace(h), "-")
	if len(parts) < 4 || len(parts[0]) != 2 || parts[0] == "ff" || !lowerHex(parts[0]) ||
		len(parts[1]) != 32 || !lowerHex(parts[1]) || strings.Trim(parts[1], "0") == "" ||
		len(parts[2]) != 16 || !lowerHex(parts[2]) || len(parts[3]) != 2 || !lowerHex(parts[3]) {
		return ""
	}
	if parts[0] == "00" && len(parts) != 4 {
		return ""
	}
	return parts[1]
}

// lowerHex reports whether s is lowercase hexadecimal digits.
func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
