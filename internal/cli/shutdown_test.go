package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestGracefulShutdownUnderLoad cancels run's context (what SIGTERM does)
// while 16 workers tokenize and one request is half sent. Every request
// answered must be a whole 201 whose token survives a restart, or fail
// cleanly without an answer (refused, reset); the half-sent request must
// finish with a 201 after the listener has closed and before run returns;
// run must return nil; and a restart on the same data directory must open
// the store and serve.
func TestGracefulShutdownUnderLoad(t *testing.T) {
	dir := t.TempDir()
	addr, out, stop := start(t, dir, nil)
	key := createRevealApp(t, addr, readManagementKey(t, dir))

	l := startLoad(addr, key, 16)
	defer l.stop()

	// A request in flight across the shutdown: headers and half the body
	// now, the rest once the listener is closed.
	slowValue := "in flight across the shutdown"
	slowBody := tokenizeBody(slowValue)
	pr, pw := io.Pipe()
	type answer struct {
		id, body   string
		status     int
		err, rdErr error
	}
	slow := make(chan answer, 1)
	go func() {
		var a answer
		a.id, a.status, a.body, a.err, a.rdErr = tokenize(&http.Client{}, addr, key, pr, int64(len(slowBody)))
		slow <- a
	}()
	half := len(slowBody) / 2
	if _, err := pw.Write(slowBody[:half]); err != nil {
		t.Fatal(err)
	}

	// Mid-load: wait for a few hundred acknowledgements.
	deadline := time.Now().Add(20 * time.Second)
	for l.count() < 200 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if l.count() == 0 {
		t.Fatal("no tokenize request succeeded before the shutdown")
	}

	began := time.Now()
	stopped := make(chan struct{})
	go func() {
		stop() // cancels run's context and fails the test if run returns an error
		close(stopped)
	}()

	// The listener closes: new connections are refused.
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Since(began) > 10*time.Second {
			t.Fatal("the listener was still open 10 s after the shutdown began")
		}
		time.Sleep(2 * time.Millisecond)
	}
	refusedAfter := time.Since(began)
	select {
	case <-stopped:
		t.Fatal("run returned while a request was still being received")
	case <-time.After(100 * time.Millisecond):
	}

	// The request in flight completes.
	if _, err := pw.Write(slowBody[half:]); err != nil {
		t.Fatalf("finishing the request in flight: %v", err)
	}
	pw.Close()
	var a answer
	select {
	case a = <-slow:
	case <-time.After(20 * time.Second):
		t.Fatal("no answer to the request in flight")
	}
	if a.err != nil || a.rdErr != nil || a.status != http.StatusCreated {
		t.Fatalf("the request in flight across the shutdown = %d %q, %v, %v; want a 201", a.status, a.body, a.err, a.rdErr)
	}
	select {
	case <-stopped:
	case <-time.After(35 * time.Second):
		t.Fatal("run did not return 35 s after its context was cancelled")
	}
	shutdownTook := time.Since(began)

	// Requests after the shutdown are refused; then stop the load.
	time.Sleep(50 * time.Millisecond)
	res := l.stop()
	res.acked = append(res.acked, acked{a.id, slowValue})
	if len(res.bad) > 0 {
		t.Errorf("%d answers were neither a whole 201 nor a clean failure, e.g. %q", len(res.bad), res.bad[:min(5, len(res.bad))])
	}
	if res.unacked == 0 {
		t.Errorf("no request failed: the load did not run past the shutdown")
	}
	if !strings.Contains(out.String(), `msg="shutting down"`) {
		t.Errorf("the server did not log its shutdown:\n%s", out)
	}
	t.Logf("acknowledged %d, failed without an answer %d; listener closed after %v, run returned after %v",
		len(res.acked), res.unacked, refusedAfter.Round(time.Millisecond), shutdownTook.Round(time.Millisecond))

	// A restart on the same directory opens the store and serves; every
	// acknowledged token is there.
	addr, _, stop = start(t, dir, nil)
	defer stop()
	if lost := verifyAcked(t, addr, key, res.acked); lost != 0 {
		t.Errorf("%d of %d acknowledged tokens lost across a graceful shutdown", lost, len(res.acked))
	}
	body := tokenizeBody("after the restart")
	id, status, answerBody, err, rdErr := tokenize(http.DefaultClient, addr, key, bytes.NewReader(body), int64(len(body)))
	if err != nil || rdErr != nil || status != http.StatusCreated {
		t.Fatalf("tokenize after the restart = %d %s, %v, %v", status, answerBody, err, rdErr)
	}
	if problem := readBack(http.DefaultClient, addr, key, acked{id, "after the restart"}); problem != "" {
		t.Errorf("token created after the restart: %s", problem)
	}
}

// TestServerTimeouts checks the timeouts run's server is built with: no
// zero (unbounded) one, headers before the whole request, and room in the
// write timeout for the slowest legitimate request, a proxy call (outbound
// client timeout 60 s, plus a request and a response transform of up to
// 10 s each).
func TestServerTimeouts(t *testing.T) {
	srv := newHTTPServer(http.NotFoundHandler())
	for name, d := range map[string]time.Duration{
		"ReadHeaderTimeout": srv.ReadHeaderTimeout, "ReadTimeout": srv.ReadTimeout,
		"WriteTimeout": srv.WriteTimeout, "IdleTimeout": srv.IdleTimeout,
	} {
		if d <= 0 {
			t.Errorf("%s = %v: unbounded", name, d)
		}
	}
	if srv.ReadHeaderTimeout != 10*time.Second || srv.ReadTimeout != 30*time.Second ||
		srv.WriteTimeout != 2*time.Minute || srv.IdleTimeout != 2*time.Minute {
		t.Errorf("timeouts = header %v, read %v, write %v, idle %v; want 10s, 30s, 2m, 2m (documented in main.go)",
			srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
	if srv.ReadHeaderTimeout > srv.ReadTimeout {
		t.Errorf("ReadHeaderTimeout %v > ReadTimeout %v", srv.ReadHeaderTimeout, srv.ReadTimeout)
	}
	if slowest := 60*time.Second + 2*10*time.Second; srv.WriteTimeout <= slowest {
		t.Errorf("WriteTimeout %v would cut off a proxy call that takes up to %v", srv.WriteTimeout, slowest)
	}
}

// TestSlowHeadersAreCut is a slowloris client against the running server:
// it trickles header lines and must be disconnected ReadHeaderTimeout after
// connecting, with no answer. It takes 10 s, so it runs with the crash test.
func TestSlowHeadersAreCut(t *testing.T) {
	if os.Getenv("TOKENVAULT_CRASH_TEST") != "1" {
		t.Skip("takes 10 s; run it with TOKENVAULT_CRASH_TEST=1 go test -run TestSlowHeadersAreCut ./internal/cli")
	}
	t.Parallel()
	addr, _, stop := start(t, t.TempDir(), nil)
	defer stop()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	began := time.Now()
	closed := make(chan error, 1)
	go func() {
		// Whatever arrives before the close is an answer the server should not give.
		b, err := io.ReadAll(bufio.NewReader(c))
		if len(b) > 0 {
			err = fmt.Errorf("unexpected answer %q", b)
		}
		closed <- err
	}()
	fmt.Fprint(c, "GET /applications HTTP/1.1\r\nHost: vault\r\n")
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case err := <-closed:
			took := time.Since(began)
			if err != nil && !errors.Is(err, net.ErrClosed) && !isReset(err) {
				t.Errorf("slow client: %v", err)
			}
			if took < readHeaderTimeout-time.Second || took > readHeaderTimeout+3*time.Second {
				t.Errorf("a slow client was disconnected after %v; want about ReadHeaderTimeout (%v)", took, readHeaderTimeout)
			}
			t.Logf("a client sending a header line every 500 ms was disconnected after %v", took.Round(time.Millisecond))
			return
		case <-tick.C:
			if time.Since(began) > readHeaderTimeout+5*time.Second {
				t.Fatalf("a slow client is still connected after %v", time.Since(began))
			}
			fmt.Fprintf(c, "X-Slow-%d: x\r\n", i) // may fail once the server has closed
		}
	}
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}
