package tokenvault

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
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
			a := ap.Addr().Unmap()
			if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
				a.IsUnspecified() || a.IsMulticast() || isCGNAT(a) {
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

// isCGNAT reports whether a is in 100.64.0.0/10, shared address space
// that is private in practice.
func isCGNAT(a netip.Addr) bool {
	return netip.MustParsePrefix("100.64.0.0/10").Contains(a)
}
