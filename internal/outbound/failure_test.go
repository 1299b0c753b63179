package outbound

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A failed attempt's error, which the tenant reads in its deliveries,
// names what went wrong in a closed vocabulary: never the transport's own
// text, which carries the Vault's network (its resolver's address here).
func TestTransportErrorTellsNothingOfTheVaultsNetwork(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		err  error
		want string
	}{
		{&url.Error{Op: "Post", URL: "https://hooks.example.com/in", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "hooks.example.com", Server: "10.255.255.53:53", IsNotFound: true}}},
			"the webhook's host name does not resolve"},
		{&url.Error{Op: "Post", URL: "https://10.1.2.3/in", Err: &net.OpError{Op: "dial", Net: "tcp", Err: ErrPrivateDestination}},
			"the webhook's host resolves to a private, loopback or link-local address"},
		{&url.Error{Op: "Post", URL: "https://192.0.2.7/in", Err: &net.OpError{Op: "dial", Net: "tcp",
			Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 443}, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}},
			"the receiver refused the connection"},
		{&url.Error{Op: "Post", URL: "https://hooks.example.com/in", Err: errors.New("read tcp 10.0.0.5:41234->192.0.2.7:443: reset")},
			"the receiver could not be reached"},
	} {
		got := TransportError(ctx, c.err, time.Second)
		if got != c.want {
			t.Errorf("TransportError(%v) = %q, want %q", c.err, got, c.want)
		}
		for _, leak := range []string{"10.255", "10.0.0.5", "hooks.example.com", "192.0.2.7", "10.1.2.3"} {
			if strings.Contains(got, leak) {
				t.Errorf("TransportError(%v) = %q tells %s", c.err, got, leak)
			}
		}
	}
}
