package vaulttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditexport"
)

// CaptureSink records what it is given. While fail is set, Deliver fails;
// while block is set, it waits for its context (a delivery cut by Close).
type CaptureSink struct {
	SinkName string
	Mu       sync.Mutex
	got      []tokenvault.AuditEvent
	// calls counts Deliver calls, blocked and failed ones included.
	Calls       int
	fail, block bool
	Blocked     chan struct{} // closed when a blocked delivery began
}

// Name is the sink's name in Stats and in the Vault's logs.
func (s *CaptureSink) Name() string { return s.SinkName }

// Deliver keeps events, unless the sink is set to fail or to block.
func (s *CaptureSink) Deliver(ctx context.Context, events []tokenvault.AuditEvent) error {
	s.Mu.Lock()
	s.Calls++
	fail, block := s.fail, s.block
	if block && s.Blocked != nil {
		close(s.Blocked)
		s.Blocked = nil
	}
	s.Mu.Unlock()
	if block {
		<-ctx.Done()
		return ctx.Err()
	}
	if fail {
		return errors.New("receiver down")
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.got = append(s.got, events...)
	return nil
}

// Set makes the next deliveries fail, or block until their context ends
// (Blocked is closed when one begins).
func (s *CaptureSink) Set(fail, block bool) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.fail, s.block = fail, block
	if block {
		s.Blocked = make(chan struct{})
	}
}

// Events is a copy of every event delivered so far.
func (s *CaptureSink) Events() []tokenvault.AuditEvent {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return append([]tokenvault.AuditEvent(nil), s.got...)
}

// AllLogs lists every log line of the tenant key's tenant, by id.
func AllLogs(t *testing.T, v *tokenvault.Vault, key tokenvault.Credential) map[string]tokenvault.Log {
	t.Helper()
	out := map[string]tokenvault.Log{}
	req := tokenvault.ListLogsRequest{PageRequest: tokenvault.PageRequest{Size: tokenvault.MaxPageSize}}
	for {
		p, err := v.ListLogs(ctx, key, req)
		if err != nil {
			t.Fatalf("ListLogs: %v", err)
		}
		for _, l := range p.Data {
			out[l.ID] = l
		}
		if p.Pagination.After == "" || len(p.Data) == 0 {
			return out
		}
		req.Start = p.Pagination.After
	}
}

// WaitExported waits (up to 30 s) until every sink of v has nothing
// pending.
func WaitExported(t *testing.T, v *tokenvault.Vault) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		done := true
		for _, s := range v.Stats().AuditExport {
			done = done && s.Pending == 0 && s.OldestAge == 0
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit export still pending after 30 s: %+v", v.Stats().AuditExport)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// AuditReceivers are the three sinks of package auditexport, each with a
// local receiver (a temp file, a UDP syslog listener, an HTTP server),
// and a capturing sink, for the secret-leak test.
type AuditReceivers struct {
	Sinks   []tokenvault.AuditSink
	file    string
	capture *CaptureSink
	mu      sync.Mutex
	syslog  bytes.Buffer
	http    bytes.Buffer
}

// NewAuditReceivers starts the receivers, each closed when the test ends.
func NewAuditReceivers(t *testing.T) *AuditReceivers {
	t.Helper()
	r := &AuditReceivers{file: filepath.Join(t.TempDir(), "audit.jsonl"), capture: &CaptureSink{SinkName: "capture"}}
	f, err := auditexport.NewFile(r.file, auditexport.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			r.mu.Lock()
			r.syslog.Write(buf[:n])
			r.syslog.WriteByte('\n')
			r.mu.Unlock()
		}
	}()
	sl, err := auditexport.NewSyslog("udp://"+pc.LocalAddr().String(), auditexport.SyslogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sl.Close() })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.http.Write(b)
		r.http.WriteString(req.Header.Get(auditexport.SignatureHeader))
	}))
	t.Cleanup(srv.Close)
	h, err := auditexport.NewHTTP(srv.URL, []byte("audit-http-secret-0123456789"), auditexport.HTTPOptions{Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r.Sinks = []tokenvault.AuditSink{f, sl, h, r.capture}
	return r
}

// Output is everything the receivers got, failing if one got nothing.
func (r *AuditReceivers) Output(t *testing.T) string {
	t.Helper()
	file, err := os.ReadFile(r.file)
	if err != nil {
		t.Fatal(err)
	}
	var capture bytes.Buffer
	for _, ev := range r.capture.Events() {
		b, _ := json.Marshal(ev)
		capture.Write(b)
	}
	// UDP datagrams to loopback arrive, but maybe after the send returns.
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		syslogLen := r.syslog.Len()
		r.mu.Unlock()
		if syslogLen > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, out := range map[string]int{"file": len(file), "syslog": r.syslog.Len(), "http": r.http.Len(), "capture": capture.Len()} {
		if out == 0 {
			t.Errorf("the %s audit sink received nothing: the test proves nothing", name)
		}
	}
	return string(file) + r.syslog.String() + r.http.String() + capture.String()
}
