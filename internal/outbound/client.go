package outbound

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Policy is the outbound policy of one Vault, built from its Options.
// The zero Policy is the strict one: private destinations refused.
type Policy struct {
	// AllowPrivate lets calls reach loopback, private and link-local
	// addresses, and http to a loopback host (Options.Outbound.
	// AllowPrivateDestinations: tests, a single machine).
	AllowPrivate bool
}

// ErrPrivateDestination is returned by the client's dialer for an
// address the policy refuses; callers tell it apart with errors.Is to
// word their own message.
var ErrPrivateDestination = errors.New("destination address is in a private, loopback or link-local range")

// Client returns the HTTP client for webhooks, proxies and fetch: bounded
// in time, and unless p.AllowPrivate, refusing to connect to an address
// PublicAddr refuses, checked on the address actually dialled (after
// DNS), so a name that resolves inward is refused too.
func (p Policy) Client() *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	if !p.AllowPrivate {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("outbound: %w", err)
			}
			if !PublicAddr(ap.Addr()) {
				return ErrPrivateDestination
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
