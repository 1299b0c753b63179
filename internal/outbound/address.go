package outbound

import (
	"net/netip"
	"strings"
)

// nonPublic lists the IPv4 ranges that are not the public internet (RFC
// 6890 and its updates), beyond what netip's predicates cover: "this
// network", shared address space (CGNAT), IETF protocol assignments,
// benchmarking, and the reserved 240/4 (with broadcast).
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
}

// nonPublic6 lists IPv6 ranges refused whole, beyond netip's predicates:
// local-use NAT64, discard-only, and documentation addresses.
var nonPublic6 = []netip.Prefix{
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// embedsIPv4 lists IPv6 prefixes whose addresses carry an IPv4 address a
// gateway may reach for them: IPv4-compatible (::/96), NAT64 (RFC 6052's
// well-known 64:ff9b::/96) and 6to4 (2002::/16). The local-use NAT64
// range 64:ff9b:1::/48 (RFC 8215), whose layout the operator picks, is
// refused whole (nonPublic6).
var embedsIPv4 = []struct {
	prefix netip.Prefix
	at     int // byte offset of the IPv4 address
}{
	{netip.MustParsePrefix("::/96"), 12},
	{netip.MustParsePrefix("64:ff9b::/96"), 12},
	{netip.MustParsePrefix("2002::/16"), 2},
}

// PublicHost reports whether a URL's host could be public: false for
// "localhost" and an address literal PublicAddr refuses; a name is looked
// up only when it is called (the client's dialer checks what it resolves
// to).
func PublicHost(host string) bool {
	if isLocalhost(host) {
		return false
	}
	a, err := netip.ParseAddr(host)
	return err != nil || PublicAddr(a)
}

// LoopbackHost reports whether a URL's host is this machine: "localhost"
// or a loopback address literal.
func LoopbackHost(host string) bool {
	a, err := netip.ParseAddr(host)
	return isLocalhost(host) || err == nil && a.Unmap().IsLoopback()
}

func isLocalhost(host string) bool {
	return strings.EqualFold(strings.TrimSuffix(host, "."), "localhost")
}

// PublicAddr reports whether a is an address on the public internet: not
// loopback, private, link-local, multicast, unspecified or reserved, also
// when an IPv6 address carries an IPv4 one (mapped, compatible, NAT64,
// 6to4), which is checked in its place.
func PublicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if a.Is6() {
		for _, e := range embedsIPv4 {
			if e.prefix.Contains(a) {
				b := a.As16()
				return PublicAddr(netip.AddrFrom4([4]byte(b[e.at : e.at+4])))
			}
		}
	}
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range append(nonPublic, nonPublic6...) {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// OddIPv4 reports whether host, a name by its form (no address parses
// from it), would be read as an IPv4 address by a resolver in the manner
// of inet_aton: its last label (a trailing dot aside) is a decimal, octal
// or hexadecimal number. No top-level domain is one.
func OddIPv4(host string) bool {
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	last := strings.ToLower(labels[len(labels)-1])
	if last == "" {
		return false
	}
	if h, ok := strings.CutPrefix(last, "0x"); ok {
		return !strings.ContainsFunc(h, func(r rune) bool { return !strings.ContainsRune("0123456789abcdef", r) })
	}
	return !strings.ContainsFunc(last, func(r rune) bool { return r < '0' || r > '9' })
}

// ASCIIHostProblem says what is wrong with a host that is not ASCII, or
// "".
//
// The HTTP client maps a non-ASCII host through IDNA before it resolves
// it, and IDNA folds compatibility characters: "127.0.0.①", full-width
// "１２７.０.０.１", ideographic full stops and other Unicode digits become
// "127.0.0.1", so such a host would pass the address checks made on its
// spelling and be refused only at dial, or read as another name than the
// one shown. An international domain name is written in its ASCII form
// (xn--...), which is what IDNA would send anyway: any host whose IDNA
// form differs from its spelling (every non-ASCII host) is refused.
func ASCIIHostProblem(host string) string {
	for _, r := range host {
		if r >= 0x80 {
			return "must name its host in ASCII: write an international domain name in its xn-- form; Unicode digits and dots are refused"
		}
	}
	return ""
}
