package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/tokenvault/tokenvault"
)

// The timeouts of the http.Client New makes when given none. A call that
// gets no answer fails within them, where http.DefaultClient would wait
// forever on a server that accepted the connection and hung.
const (
	// DefaultTimeout bounds one call, from sending the request to reading
	// the whole answer: longer than the server's own bound on writing a
	// response (2 minutes, room for a proxy call whose destination takes
	// up to 60 s and its transforms), so every answer it gives arrives.
	// Backup, whose transfer grows with the store, is bounded by the
	// timeouts below and its context only.
	DefaultTimeout = 3 * time.Minute
	// DefaultDialTimeout bounds opening a TCP connection.
	DefaultDialTimeout = 10 * time.Second
	// DefaultTLSHandshakeTimeout bounds the TLS handshake.
	DefaultTLSHandshakeTimeout = 10 * time.Second
	// DefaultResponseHeaderTimeout bounds the wait for the answer's
	// headers once the request is sent (Backup's included).
	DefaultResponseHeaderTimeout = 150 * time.Second
)

// newTransport is http.DefaultTransport's settings (proxy from the
// environment, HTTP/2, idle connections kept 90 s) with the timeouts above,
// and its own connection pool.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: DefaultDialTimeout, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = DefaultTLSHandshakeTimeout
	t.ResponseHeaderTimeout = DefaultResponseHeaderTimeout
	t.MaxIdleConnsPerHost = 16
	return t
}

// failed is the error of a call whose request got no (whole) answer: the
// context's own error when it is done (a deadline passed, or it was
// cancelled), so that errors.Is(err, context.DeadlineExceeded) holds and
// the message says so; otherwise the server cannot be reached, with the
// URL and the cause (connection refused, timeout, TLS, unknown host).
// Both are *tokenvault.Error wrapping err's cause.
func (c *Client) failed(ctx context.Context, what string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(cerr, context.DeadlineExceeded) {
			return &tokenvault.Error{Kind: tokenvault.Unavailable, Message: fmt.Sprintf("the context's deadline passed before %s answered (context deadline exceeded)", c.where()), Err: cerr}
		}
		return &tokenvault.Error{Kind: tokenvault.Unavailable, Message: fmt.Sprintf("the request to %s was cancelled (context canceled)", c.where()), Err: cerr}
	}
	return &tokenvault.Error{Kind: tokenvault.Unavailable, Message: fmt.Sprintf("%s %s: %s", c.where(), what, cause(err)), Err: err}
}

// where names the server by its base URL, without a password.
func (c *Client) where() string {
	u, err := url.Parse(c.base)
	if err != nil || u.Host == "" {
		return "the server at " + c.base
	}
	return "the server at " + u.Redacted()
}

// cause says why a request failed, in words an operator acts on.
func cause(err error) string {
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	var rec tls.RecordHeaderError
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (no server listens at that address and port)"
	case errors.As(err, &dns):
		return "the host name does not resolve (" + dns.Error() + ")"
	case errors.As(err, &cert):
		return "TLS: the server's certificate is not trusted (" + cert.Err.Error() + ")"
	case errors.As(err, &rec), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "TLS: the server does not speak TLS (an https:// URL for an http:// server?)"
	case strings.Contains(err.Error(), "tls: "):
		return "TLS: " + unwrapURL(err).Error()
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out (" + unwrapURL(err).Error() + ")"
	case errors.Is(err, syscall.ECONNRESET):
		return "the connection was reset"
	}
	return unwrapURL(err).Error()
}

// unwrapURL drops url.Error's method and URL, which the message names
// already.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
