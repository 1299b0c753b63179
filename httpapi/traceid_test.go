package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestTraceIDOf: X-Request-Id when it is 1 to 128 printable ASCII
// characters without spaces, else a valid traceparent's trace id, else
// nothing.
func TestTraceIDOf(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, c := range []struct {
		requestID, traceparent, want string
	}{
		{"abc-123", tp, "abc-123"},
		{"", tp, "4bf92f3577b34da6a3ce929d0e0e4736"},
		{strings.Repeat("r", 128), "", strings.Repeat("r", 128)},
		{strings.Repeat("r", 129), tp, "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"has space", "", ""},
		{"tab\there", "", ""},
		{"caf\u00e9", "", ""},
		{"nl\nx", "", ""},
		{"", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", ""},
		{"", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ""},
		{"", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", ""},
		{"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", ""},
		{"", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"", "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", ""},
		{"", "garbage", ""},
		{"", "", ""},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if c.requestID != "" {
			r.Header["X-Request-Id"] = []string{c.requestID}
		}
		if c.traceparent != "" {
			r.Header.Set("Traceparent", c.traceparent)
		}
		if got := traceIDOf(r); got != c.want {
			t.Errorf("X-Request-Id %q, traceparent %q: %q, want %q", c.requestID, c.traceparent, got, c.want)
		}
	}
}
