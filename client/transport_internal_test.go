package client

import (
	"net/http"
	"testing"
)

// TestNewWithoutHTTPClientHasTimeouts: New(url, nil) calls with a client
// of its own whose calls and connections are bounded, not with
// http.DefaultClient (which waits forever); Backup's client shares its
// transport without the overall bound; a client given is used as is.
func TestNewWithoutHTTPClientHasTimeouts(t *testing.T) {
	c := New("http://127.0.0.1:8080", nil)
	if c.hc == http.DefaultClient || c.hc.Timeout != DefaultTimeout {
		t.Fatalf("New(url, nil) calls with %p (DefaultClient %p), timeout %v; want its own, %v", c.hc, http.DefaultClient, c.hc.Timeout, DefaultTimeout)
	}
	tr, ok := c.hc.Transport.(*http.Transport)
	if !ok || tr == http.DefaultTransport || tr.TLSHandshakeTimeout != DefaultTLSHandshakeTimeout || tr.ResponseHeaderTimeout != DefaultResponseHeaderTimeout || tr.DialContext == nil {
		t.Fatalf("transport %#v: want its own, with dial, TLS handshake and response header timeouts", c.hc.Transport)
	}
	if c.stream.Transport != tr || c.stream.Timeout != 0 {
		t.Errorf("Backup's client: transport %p timeout %v; want the same transport, no overall timeout", c.stream.Transport, c.stream.Timeout)
	}
	own := &http.Client{}
	if c := New("http://127.0.0.1:8080", own); c.hc != own || c.stream != own {
		t.Error("a client given is not the one used")
	}
}
