package ratelimit

import "testing"

// TestAddress: an IPv4 address (mapped or not, with a port or not) is
// itself, an IPv6 address is its /64, anything else is one bucket, and ""
// stays "".
func TestAddress(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"", ""},
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"192.0.2.7:1234", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:80", "192.0.2.7"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2::9]:443", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"not-an-ip-7", "not-an-ip"},
		{"example.com:80", "not-an-ip"},
		{"192.0.2.300", "not-an-ip"},
	} {
		if got := Address(tc.addr); got != tc.want {
			t.Errorf("Address(%q) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
