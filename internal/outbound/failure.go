package outbound

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"time"
)

// TransportError describes a failed request to a webhook's receiver in a
// closed vocabulary, as a proxy's errors are: the transport's own text
// would tell the tenant (who reads it in the deliveries list) about the
// Vault's network, such as the address of its DNS resolver. ctx is the
// request's context and timeout its budget, named in the message.
func TransportError(ctx context.Context, err error, timeout time.Duration) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var ue *url.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.As(err, &ue) && ue.Timeout():
		return fmt.Sprintf("no answer within %s", timeout)
	case errors.Is(err, ErrPrivateDestination):
		return "the webhook's host resolves to a private, loopback or link-local address"
	case errors.As(err, &dnsErr):
		return "the webhook's host name does not resolve"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the receiver refused the connection"
	case errors.As(err, &certErr):
		return "the receiver's TLS certificate was not accepted"
	default:
		return "the receiver could not be reached"
	}
}
