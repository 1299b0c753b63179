package auditexport_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditexport"
)

var ctx = context.Background()

func events(n int) []tokenvault.AuditEvent {
	var out []tokenvault.AuditEvent
	for i := range n {
		out = append(out, tokenvault.AuditEvent{Schema: tokenvault.AuditSchema, ID: fmt.Sprintf("id-%03d", i), TenantID: "t1",
			ActorID: "a1", ActorType: "application", EntityType: "token", EntityID: fmt.Sprintf("tok-%d", i),
			Operation: "create", Message: "Token created", CreatedAt: time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.UTC)})
	}
	return out
}

// readJSONLines decodes every line of path.
func readJSONLines(t *testing.T, path string) []tokenvault.AuditEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []tokenvault.AuditEvent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev tokenvault.AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, ev)
	}
	return out
}

func TestFileWritesJSONLinesAndRotates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	line, _ := json.Marshal(events(1)[0])
	perLine := int64(len(line) + 1)
	// Three lines a file, two rotated files kept.
	f, err := auditexport.NewFile(path, auditexport.FileOptions{MaxBytes: 3 * perLine, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	all := events(11)
	if err := f.Deliver(ctx, all[:4]); err != nil {
		t.Fatal(err)
	}
	if err := f.Deliver(ctx, all[4:]); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// 11 lines: [0 1 2] [3 4 5] [6 7 8] [9 10]; the first file went.
	for name, want := range map[string][]tokenvault.AuditEvent{
		"audit.jsonl": all[9:], "audit.jsonl.1": all[6:9], "audit.jsonl.2": all[3:6],
	} {
		got := readJSONLines(t, filepath.Join(dir, name))
		if len(got) != len(want) {
			t.Errorf("%s holds %d events, want %d", name, len(got), len(want))
			continue
		}
		for i := range got {
			if got[i].ID != want[i].ID || !got[i].CreatedAt.Equal(want[i].CreatedAt) || got[i].Schema != tokenvault.AuditSchema {
				t.Errorf("%s line %d = %+v, want %+v", name, i, got[i], want[i])
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "audit.jsonl.3")); !os.IsNotExist(err) {
		t.Errorf("audit.jsonl.3 exists (%v), want only 2 rotated files kept", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	// Reopening appends.
	f, err = auditexport.NewFile(path, auditexport.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Deliver(ctx, events(1)); err != nil {
		t.Fatal(err)
	}
	if got := readJSONLines(t, path); len(got) != 3 || got[2].ID != "id-000" {
		t.Errorf("after reopening, %s holds %d events, want 3 ending with id-000", path, len(got))
	}
	// A line cut short is ended before the next event.
	torn := filepath.Join(dir, "torn.jsonl")
	os.WriteFile(torn, []byte(string(line)+"\n"+string(line[:20])), 0o600)
	tf, err := auditexport.NewFile(torn, auditexport.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	if err := tf.Deliver(ctx, events(2)[1:]); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(torn)
	if lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n"); len(lines) != 3 || !strings.Contains(lines[2], `"id":"id-001"`) {
		t.Errorf("after a torn line, the file holds %q, want the new event on a line of its own", raw)
	}
	// The exact JSON field names of schema v1.
	raw, _ = os.ReadFile(path)
	first := strings.SplitN(string(raw), "\n", 2)[0]
	want := `{"schema":"tokenvault.audit/v1","id":"id-009","tenant_id":"t1","actor_id":"a1","actor_type":"application","entity_type":"token","entity_id":"tok-9","operation":"create","message":"Token created","created_at":"2030-01-02T03:04:05.123456789Z"}`
	if first != want {
		t.Errorf("line = %s\nwant   %s", first, want)
	}
}

// rfc5424RE matches the messages Syslog sends.
var rfc5424RE = regexp.MustCompile(`^<110>1 2030-01-02T03:04:05\.123456Z testhost tokenvault \d+ audit - (\{.*\})$`)

func checkSyslogMessage(t *testing.T, msg string, want tokenvault.AuditEvent) {
	t.Helper()
	m := rfc5424RE.FindStringSubmatch(msg)
	if m == nil {
		t.Errorf("message %q is not the RFC 5424 form wanted", msg)
		return
	}
	var ev tokenvault.AuditEvent
	if err := json.Unmarshal([]byte(m[1]), &ev); err != nil || ev.ID != want.ID || ev.Schema != tokenvault.AuditSchema {
		t.Errorf("message body %s (%v), want event %s", m[1], err, want.ID)
	}
}

func TestSyslogUDP(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	s, err := auditexport.NewSyslog("udp://"+pc.LocalAddr().String(), auditexport.SyslogOptions{Hostname: "test host"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all := events(3)
	if err := s.Deliver(ctx, all); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for _, want := range all {
		pc.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		checkSyslogMessage(t, string(buf[:n]), want) // one message a datagram
	}
}

func TestSyslogTCPOctetCounting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	msgs := make(chan string, 100)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					// RFC 6587 3.4.1: MSG-LEN SP SYSLOG-MSG.
					lenText, err := r.ReadString(' ')
					if err != nil {
						return
					}
					n, err := strconv.Atoi(strings.TrimSuffix(lenText, " "))
					if err != nil || n <= 0 {
						msgs <- "bad length " + lenText
						return
					}
					b := make([]byte, n)
					if _, err := io.ReadFull(r, b); err != nil {
						msgs <- "short message"
						return
					}
					msgs <- string(b)
				}
			}()
		}
	}()
	s, err := auditexport.NewSyslog("tcp://"+ln.Addr().String(), auditexport.SyslogOptions{Hostname: "testhost"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all := events(5)
	if err := s.Deliver(ctx, all[:2]); err != nil {
		t.Fatal(err)
	}
	if err := s.Deliver(ctx, all[2:]); err != nil {
		t.Fatal(err)
	}
	for _, want := range all {
		select {
		case msg := <-msgs:
			checkSyslogMessage(t, msg, want)
		case <-time.After(10 * time.Second):
			t.Fatal("no message in 10 s")
		}
	}
}

// TestSyslogTCPReconnects: after the collector closes the connection, the
// next delivery goes over a new one instead of into the closed one.
func TestSyslogTCPReconnects(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type conn struct {
		n   int
		msg string
	}
	msgs := make(chan conn, 10)
	closed := make(chan struct{})
	go func() {
		for n := 1; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r := bufio.NewReader(c)
			if _, err := r.ReadString(' '); err == nil {
				line, _ := r.ReadString('}')
				msgs <- conn{n, line}
			}
			if n == 1 {
				c.Close() // the collector restarts
				close(closed)
			} else {
				defer c.Close()
			}
		}
	}()
	s, err := auditexport.NewSyslog("tcp://"+ln.Addr().String(), auditexport.SyslogOptions{Hostname: "testhost"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all := events(2)
	if err := s.Deliver(ctx, all[:1]); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the collector got nothing in 10 s")
	}
	time.Sleep(50 * time.Millisecond) // the FIN reaches the sink
	if err := s.Deliver(ctx, all[1:]); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		select {
		case m := <-msgs:
			if m.n != i+1 || !strings.Contains(m.msg, all[i].ID) {
				t.Errorf("connection %d got %q, want connection %d to get %s", m.n, m.msg, i+1, all[i].ID)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("message %d never arrived: it went into the closed connection", i+1)
		}
	}
}

func TestSyslogURLs(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:514", "http://127.0.0.1:514", "udp://127.0.0.1", "tcp://:514/x", "unix:///dev/log"} {
		if _, err := auditexport.NewSyslog(u, auditexport.SyslogOptions{}); err == nil {
			t.Errorf("NewSyslog(%q) succeeded, want an error", u)
		}
	}
}

func TestHTTPSignsBatchesAndRetries(t *testing.T) {
	secret := []byte("0123456789abcdef-secret")
	var mu sync.Mutex
	var posts int
	var got []tokenvault.AuditEvent
	var batches []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := auditexport.VerifySignature(secret, r.Header.Get(auditexport.SignatureHeader), body, time.Now(), time.Minute); err != nil {
			t.Errorf("signature %q: %v", r.Header.Get(auditexport.SignatureHeader), err)
		}
		if r.Method != "POST" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s with Content-Type %q", r.Method, r.Header.Get("Content-Type"))
		}
		mu.Lock()
		defer mu.Unlock()
		posts++
		if posts%2 == 1 { // every batch fails once with a 500
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		var b struct{ Events []tokenvault.AuditEvent }
		if err := json.Unmarshal(body, &b); err != nil {
			t.Errorf("body %s: %v", body, err)
		}
		got = append(got, b.Events...)
		batches = append(batches, len(b.Events))
	}))
	defer srv.Close()
	s, err := auditexport.NewHTTP(srv.URL+"/audit", secret, auditexport.HTTPOptions{Batch: 2, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	all := events(5)
	if err := s.Deliver(ctx, all); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if posts != 6 || fmt.Sprint(batches) != "[2 2 1]" {
		t.Errorf("%d POSTs, batches %v; want 6 POSTs (each batch after one 500), batches [2 2 1]", posts, batches)
	}
	if len(got) != 5 {
		t.Fatalf("received %d events, want 5", len(got))
	}
	for i := range got {
		if got[i].ID != all[i].ID {
			t.Errorf("event %d = %s, want %s", i, got[i].ID, all[i].ID)
		}
	}
}

func TestHTTPFailsAfterItsAttempts(t *testing.T) {
	var mu sync.Mutex
	posts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posts++
		mu.Unlock()
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	s, err := auditexport.NewHTTP(srv.URL, []byte("0123456789abcdef"), auditexport.HTTPOptions{Attempts: 3, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Deliver(ctx, events(1)); err == nil {
		t.Fatal("Deliver to an endpoint answering 503 succeeded")
	}
	if posts != 3 {
		t.Errorf("%d POSTs, want 3", posts)
	}
}

func TestVerifySignature(t *testing.T) {
	secret, body, now := []byte("0123456789abcdef"), []byte(`{"events":[]}`), time.Unix(1900000000, 0)
	h := auditexport.Sign(secret, now, body)
	if err := auditexport.VerifySignature(secret, h, body, now, time.Minute); err != nil {
		t.Errorf("VerifySignature of a good signature: %v", err)
	}
	for name, c := range map[string]struct {
		secret, body []byte
		header       string
		now          time.Time
	}{
		"other body":   {secret, []byte(`{"events":[1]}`), h, now},
		"other secret": {[]byte("0123456789abcdeX"), body, h, now},
		"stale":        {secret, body, h, now.Add(time.Hour)},
		"malformed":    {secret, body, "sha256=00", now},
		"empty":        {secret, body, "", now},
	} {
		if err := auditexport.VerifySignature(c.secret, c.header, c.body, c.now, time.Minute); err == nil {
			t.Errorf("%s: VerifySignature succeeded", name)
		}
	}
	if _, err := auditexport.NewHTTP("http://127.0.0.1:1/", []byte("short"), auditexport.HTTPOptions{}); err == nil {
		t.Error("NewHTTP with a 5-byte secret succeeded")
	}
}
