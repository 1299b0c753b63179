package outbound

import (
	"net/netip"
	"testing"
)

// TestPublicAddr: the outbound policy refuses every address that is not
// on the public internet, also when an IPv6 address carries an IPv4 one.
func TestPublicAddr(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		public bool
	}{
		{"93.184.216.34", true},
		{"2606:2800:220:1:248:1893:25c8:1946", true},
		{"127.0.0.1", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false}, // cloud metadata
		{"100.100.100.200", false}, // CGNAT, a cloud metadata address too
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"192.0.0.170", false},
		{"198.18.0.1", false},
		{"240.0.0.1", false},
		{"255.255.255.255", false},
		{"224.0.0.1", false},
		{"::", false},
		{"::1", false},
		{"fe80::1", false},
		{"fd00:ec2::254", false},
		{"ff02::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:93.184.216.34", true},
		{"::127.0.0.1", false},        // IPv4-compatible
		{"64:ff9b::a9fe:a9fe", false}, // NAT64 of 169.254.169.254
		{"64:ff9b::5db8:d822", true},  // NAT64 of 93.184.216.34
		{"64:ff9b:1::a00:1", false},   // local-use NAT64 of 10.0.0.1
		{"2002:a9fe:a9fe::1", false},  // 6to4 of 169.254.169.254
		{"2002:5db8:d822::1", true},   // 6to4 of 93.184.216.34
	} {
		if got := PublicAddr(netip.MustParseAddr(tc.addr)); got != tc.public {
			t.Errorf("PublicAddr(%s) = %v, want %v", tc.addr, got, tc.public)
		}
	}
}

// TestHostSpellings: "localhost" and loopback literals are this machine,
// in any case and with a trailing dot; a name is public until it is
// dialled; among names, IPv4 addresses spelt as inet_aton reads them
// are told apart, and non-ASCII hosts are refused.
func TestHostSpellings(t *testing.T) {
	for _, tc := range []struct {
		host              string
		public, loopback  bool
		oddIPv4, nonASCII bool
	}{
		{host: "hooks.example.com", public: true},
		{host: "localhost", loopback: true},
		{host: "LocalHost.", loopback: true},
		{host: "127.0.0.2", loopback: true},
		{host: "::1", loopback: true},
		{host: "::ffff:127.0.0.1", loopback: true},
		{host: "10.0.0.1"},
		{host: "93.184.216.34", public: true},
		{host: "2130706433", public: true, oddIPv4: true},
		{host: "0x7f.1", public: true, oddIPv4: true},
		{host: "127.1", public: true, oddIPv4: true},
		{host: "example.0x", public: true, oddIPv4: true}, // inet_aton reads "0x" as 0
		{host: "127.0.0.\u2460", public: true, nonASCII: true},
		{host: "hooks.\u0435xample.com", public: true, nonASCII: true},
	} {
		if got := PublicHost(tc.host); got != tc.public {
			t.Errorf("PublicHost(%q) = %v, want %v", tc.host, got, tc.public)
		}
		if got := LoopbackHost(tc.host); got != tc.loopback {
			t.Errorf("LoopbackHost(%q) = %v, want %v", tc.host, got, tc.loopback)
		}
		if _, err := netip.ParseAddr(tc.host); err != nil && OddIPv4(tc.host) != tc.oddIPv4 {
			t.Errorf("OddIPv4(%q) = %v, want %v", tc.host, !tc.oddIPv4, tc.oddIPv4)
		}
		if got := ASCIIHostProblem(tc.host) != ""; got != tc.nonASCII {
			t.Errorf("ASCIIHostProblem(%q) != \"\" is %v, want %v", tc.host, got, tc.nonASCII)
		}
	}
}
