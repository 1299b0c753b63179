package outbound

import (
	"strings"
	"testing"
)

// TestProxyTarget: the caller's suffix stays inside the destination's
// path, segment by segment, and the queries merge.
func TestProxyTarget(t *testing.T) {
	const dest = "https://pay.example/api/v1/payments"
	for _, tc := range []struct {
		dest, suffix, raw, query, want string
	}{
		{dest, "", "", "", dest},
		{dest, "/", "", "", dest + "/"},
		{dest, "/charge", "", "a=1", dest + "/charge?a=1"},
		{dest + "/", "/charge", "", "", dest + "/charge"},
		{dest, "/a?b=c", "", "", dest + "/a%3Fb=c"},
		{dest, "/a#x", "", "", dest + "/a%23x"},
		{dest, "/a\nb", "", "", dest + "/a%0Ab"},
		{dest, "/a b/c", "", "", dest + "/a%20b/c"},
		{dest + "?api_key=K", "/x", "", "b=2&a=1", dest + "/x?api_key=K&b=2&a=1"},
		// An encoded "/" the caller sent stays inside its segment.
		{dest, "/files/a/b", "/files/a%2Fb", "", dest + "/files/a%2Fb"},
		{dest, "/files/a/b", "/files/a%2fb", "", dest + "/files/a%2Fb"},
		// Other escapes are normalized, as without a raw path.
		{dest, "/a b", "/a%20b", "", dest + "/a%20b"},
		{dest, "/ab", "/%61b", "", dest + "/ab"},
		// A raw path that is not an escaping of the suffix is ignored.
		{dest, "/a/b", "/x", "", dest + "/a/b"},
		{dest, "/a/b", "/a%zzb", "", dest + "/a/b"},
		{dest, "/a", "a", "", dest + "/a"},
		{dest, "/a", "%2Fa", "", dest + "/a"},
	} {
		u, err := ProxyTarget(tc.dest, EscapePath(tc.suffix, tc.raw), tc.query)
		if err != nil {
			t.Errorf("ProxyTarget(%q, %q, %q, %q): %v", tc.dest, tc.suffix, tc.raw, tc.query, err)
			continue
		}
		if got := u.String(); got != tc.want {
			t.Errorf("ProxyTarget(%q, %q, %q, %q) = %s, want %s", tc.dest, tc.suffix, tc.raw, tc.query, got, tc.want)
		}
	}
	for _, bad := range []string{"/..", "/../admin", "/a/../../admin", "/./a", "/a/../b", "@evil.example", "evil"} {
		err := CheckProxyPath(bad)
		if err == nil {
			t.Errorf("CheckProxyPath(%q) = nil, want Invalid", bad)
		} else if strings.Contains(err.Error(), "pay.example") {
			t.Errorf("CheckProxyPath(%q) quotes the destination: %v", bad, err)
		}
	}
}
