package auditexport_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/auditexport"
)

// anySyslogRE matches a message Syslog sends, whatever its time and host.
var anySyslogRE = regexp.MustCompile(`^<110>1 \S+ \S+ tokenvault \S+ audit - (\{.*\})$`)

// fixtureEvents reads the fixture chain (testdata/auditchain) as the
// events a Vault hands its sinks, and its keys.
func fixtureEvents(t *testing.T) ([]tokenvault.AuditEvent, []auditchain.PublicKey) {
	t.Helper()
	b, err := os.ReadFile("../testdata/auditchain/export.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var events []tokenvault.AuditEvent
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var ev tokenvault.AuditEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	kb, err := os.ReadFile("../testdata/auditchain/keys.json")
	if err != nil {
		t.Fatal(err)
	}
	var keys struct{ Keys []auditchain.PublicKey }
	if err := json.Unmarshal(kb, &keys); err != nil {
		t.Fatal(err)
	}
	return events, keys.Keys
}

// checkVerifies fails unless the JSON lines got verify as the fixture
// does: both tenants' chains whole and signed to their end.
func checkVerifies(t *testing.T, sink string, got []byte, keys []auditchain.PublicKey) {
	t.Helper()
	for _, tc := range []struct {
		tenant string
		last   uint64
	}{{"0193f1d2-0000-7000-8000-00000000000a", 8}, {"0193f1d2-0000-7000-8000-00000000000b", 3}} {
		r, err := auditchain.VerifyExport(bytes.NewReader(got), tc.tenant, keys, 1)
		if err != nil {
			t.Fatalf("%s: %v", sink, err)
		}
		if !r.OK || r.LastSeq != tc.last || r.SignedThrough != tc.last {
			t.Errorf("%s: tenant %s: %+v", sink, tc.tenant, r)
		}
	}
}

// TestSinksCarryTheChain: what each sink delivers of a chain (the
// fixture's lines, with their links, and its checkpoints) verifies with
// auditchain as the fixture does: no sink drops a field the chain covers.
func TestSinksCarryTheChain(t *testing.T) {
	events, keys := fixtureEvents(t)

	t.Run("file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		f, err := auditexport.NewFile(path, auditexport.FileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Deliver(ctx, events); err != nil {
			t.Fatal(err)
		}
		f.Close()
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		checkVerifies(t, "file", got, keys)
	})

	t.Run("syslog", func(t *testing.T) {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		s, err := auditexport.NewSyslog("udp://"+pc.LocalAddr().String(), auditexport.SyslogOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Deliver(ctx, events); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		buf := make([]byte, 64<<10)
		for range events {
			pc.SetReadDeadline(time.Now().Add(10 * time.Second))
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				t.Fatal(err)
			}
			m := anySyslogRE.FindSubmatch(buf[:n])
			if m == nil {
				t.Fatalf("message %q is not RFC 5424", buf[:n])
			}
			got.Write(m[1])
			got.WriteByte('\n')
		}
		checkVerifies(t, "syslog", got.Bytes(), keys)
	})

	t.Run("http", func(t *testing.T) {
		var mu sync.Mutex
		var got bytes.Buffer
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var b struct{ Events []json.RawMessage }
			if err := json.Unmarshal(body, &b); err != nil {
				t.Errorf("body %s: %v", body, err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, ev := range b.Events {
				got.Write(ev)
				got.WriteByte('\n')
			}
		}))
		defer srv.Close()
		s, err := auditexport.NewHTTP(srv.URL, []byte("0123456789abcdef-secret"), auditexport.HTTPOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Deliver(ctx, events); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		checkVerifies(t, "http", got.Bytes(), keys)
	})
}
