package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
)

// TestContextDeadlineIsReportedAsSuch: a call whose context's deadline
// passes while the server holds the request fails with an error that is
// context.DeadlineExceeded and says so, not "cannot be reached"; a
// cancelled context likewise; Backup too.
func TestContextDeadlineIsReportedAsSuch(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	c := client.New(srv.URL, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := c.ListTenants(ctx, "operator-key-0123456789", tokenvault.PageRequest{})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "deadline") || strings.Contains(err.Error(), "cannot be reached") {
		t.Errorf("a call past its deadline = %v, want context.DeadlineExceeded, said so", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := c.Backup(ctx, "operator-key-0123456789", &bytes.Buffer{}); !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "cannot be reached") {
		t.Errorf("Backup past its deadline = %v, want context.DeadlineExceeded", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	if _, err := c.Tokenize(ctx, "key", map[string]any{"a": 1}); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "cancelled") || strings.Contains(err.Error(), "cannot be reached") {
		t.Errorf("a cancelled call = %v, want context.Canceled, said so", err)
	}
}

// TestUnreachableServerNamesURLAndCause: a server that cannot be reached
// is Unavailable, and the message names the URL and why: connection
// refused, a certificate not trusted, a plain HTTP server at an https://
// URL.
func TestUnreachableServerNamesURLAndCause(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes it refuses
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	httpsToPlain := "https://" + strings.TrimPrefix(plain.URL, "http://")
	for _, tc := range []struct{ url, want string }{
		{closed, "connection refused"},
		{tlsSrv.URL, "TLS: the server's certificate is not trusted"},
		{httpsToPlain, "TLS: the server does not speak TLS"},
	} {
		_, err := client.New(tc.url, nil).ListTenants(context.Background(), "operator-key-0123456789", tokenvault.PageRequest{})
		if !errors.Is(err, tokenvault.ErrUnavailable) || !strings.Contains(err.Error(), "the server at "+tc.url+" cannot be reached") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want Unavailable naming the URL and %q", tc.url, err, tc.want)
		}
	}
}
