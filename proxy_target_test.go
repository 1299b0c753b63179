package tokenvault

import (
	"strings"
	"testing"
)

// TestProxyTarget: the caller's suffix stays inside the destination's
// path, segment by segment, and the queries merge.
func TestProxyTarget(t *testing.T) {
	const dest = "https://pay.example/api/v1/payments"
	for _, tc := range []struct {
		dest, suffix, query, want string
	}{
		{dest, "", "", dest},
		{dest, "/", "", dest + "/"},
		{dest, "/charge", "a=1", dest + "/charge?a=1"},
		{dest + "/", "/charge", "", dest + "/charge"},
		{dest, "/a?b=c", "", dest + "/a%3Fb=c"},
		{dest, "/a#x", "", dest + "/a%23x"},
		{dest, "/a\nb", "", dest + "/a%0Ab"},
		{dest, "/a b/c", "", dest + "/a%20b/c"},
		{dest + "?api_key=K", "/x", "b=2&a=1", dest + "/x?api_key=K&b=2&a=1"},
	} {
		u, err := proxyTarget(tc.dest, tc.suffix, tc.query)
		if err != nil {
			t.Errorf("proxyTarget(%q, %q, %q): %v", tc.dest, tc.suffix, tc.query, err)
			continue
		}
		if got := u.String(); got != tc.want {
			t.Errorf("proxyTarget(%q, %q, %q) = %s, want %s", tc.dest, tc.suffix, tc.query, got, tc.want)
		}
	}
	for _, bad := range []string{"/..", "/../admin", "/a/../../admin", "/./a", "@evil.example", "evil"} {
		err := checkProxyPath(bad)
		if err == nil {
			t.Errorf("checkProxyPath(%q) = nil, want Invalid", bad)
		} else if strings.Contains(err.Error(), "pay.example") {
			t.Errorf("checkProxyPath(%q) quotes the destination: %v", bad, err)
		}
	}
}
