package tokenvault

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// errPrivateDestination is returned by the dialer for an address the
// outbound policy refuses.
var errPrivateDestination = errors.New("destination address is in a private, loopback or link-local range")

// outboundClient is the HTTP client for webhooks and proxies: bounded in
// time, and unless allowPrivate, refusing to connect to loopback, private,
// link-local and unspecified addresses, checked on the address actually
// dialled (after DNS), so a name that resolves inward is refused too.
func outboundClient(allowPrivate bool) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	if !allowPrivate {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("outbound: %w", err)
			}
			if !publicAddr(ap.Addr()) {
				return errPrivateDestination
			}
			return nil
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = dialer.DialContext
	tr.Proxy = nil // the environment's proxy would bypass the address check
	tr.ResponseHeaderTimeout = 30 * time.Second
	return &http.Client{
		Transport: tr,
		Timeout:   60 * time.Second,
		// Redirects are the caller's business: a proxy returns them raw.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

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

// publicHost reports whether a URL's host could be public: false for
// "localhost" and an address literal publicAddr refuses; a name is looked
// up only when it is called (the dialer checks what it resolves to).
func publicHost(host string) bool {
	if isLocalhost(host) {
		return false
	}
	a, err := netip.ParseAddr(host)
	return err != nil || publicAddr(a)
}

// loopbackHost reports whether a URL's host is this machine: "localhost"
// or a loopback address literal.
func loopbackHost(host string) bool {
	a, err := netip.ParseAddr(host)
	return isLocalhost(host) || err == nil && a.Unmap().IsLoopback()
}

func isLocalhost(host string) bool {
	return strings.EqualFold(strings.TrimSuffix(host, "."), "localhost")
}

// publicAddr reports whether a is an address on the public internet: not
// loopback, private, link-local, multicast, unspecified or reserved, also
// when an IPv6 address carries an IPv4 one (mapped, compatible, NAT64,
// 6to4), which is checked in its place.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if a.Is6() {
		for _, e := range embedsIPv4 {
			if e.prefix.Contains(a) {
				b := a.As16()
				return publicAddr(netip.AddrFrom4([4]byte(b[e.at : e.at+4])))
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

// parseOutboundURL parses the URL of a proxy's destination or a webhook
// and says what is wrong with its shape, or "": it must be absolute, http
// or https, without credentials or fragment, with a host of at most 253
// bytes and a port in 1-65535 if it has one. Which scheme and hosts are
// allowed is the caller's policy.
func parseOutboundURL(raw string) (*url.URL, string) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, "must be an absolute https URL"
	}
	if u.User != nil || u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, "must not hold credentials (user@) or a fragment (#)"
	}
	if host := u.Hostname(); host == "" || len(host) > 253 {
		return nil, "must name a host of at most 253 characters"
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, "must have a port from 1 to 65535"
		}
	}
	return u, ""
}
