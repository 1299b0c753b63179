package auditexport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault"
)

// Syslog message fields. Facility 13 is "log audit" (RFC 5424 section
// 6.2.1), severity 6 informational: PRI 13*8+6.
const (
	syslogPRI     = 13*8 + 6
	syslogApp     = "tokenvault"
	syslogMsgID   = "audit"
	syslogTimeout = 10 * time.Second
)

// SyslogOptions configure a Syslog sink. Zero values mean the defaults.
type SyslogOptions struct {
	// Name is the sink's name (tokenvault.AuditSink). Empty: "syslog".
	Name string
	// Hostname is the HOSTNAME field. Empty: os.Hostname, or "-".
	Hostname string
	// Timeout bounds connecting and writing one delivery. Zero: 10 s.
	Timeout time.Duration
}

// Syslog sends each event as one RFC 5424 message, to a collector over UDP
// (one message a datagram) or TCP (octet-counting framing, RFC 6587
// section 3.4.1: "<length> <message>"); a connection the collector closed
// is noticed before a delivery and replaced. The message is
//
//	<110>1 2030-01-02T03:04:05.123456Z host tokenvault 4242 audit - {"schema":"tokenvault.audit/v1",...}
//
// PRI 110 (facility 13, log audit; severity 6, informational), version 1,
// the event's created_at with microseconds, HOSTNAME, APP-NAME tokenvault,
// PROCID the process id, MSGID audit, no structured data, and the event's
// JSON as MSG (UTF-8, no BOM). Syslog has no acknowledgement: a delivery
// counts once written to the connection. UDP loses what the network drops,
// so prefer TCP where loss matters; over TCP a write error closes the
// connection and fails the delivery, which is then sent again on a new
// connection, but a collector that dies holding messages it had read loses
// them.
type Syslog struct {
	network, addr string
	name          string
	hostname      string
	procID        string
	timeout       time.Duration

	mu   sync.Mutex
	conn net.Conn
}

var _ tokenvault.AuditSink = (*Syslog)(nil)

// NewSyslog returns a sink for the collector at rawURL, udp://host:port or
// tcp://host:port. It connects at the first delivery.
func NewSyslog(rawURL string, opts SyslogOptions) (*Syslog, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "udp" && u.Scheme != "tcp") || u.Host == "" || u.Port() == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("auditexport: the syslog address must be udp://host:port or tcp://host:port, not %q", rawURL)
	}
	s := &Syslog{network: u.Scheme, addr: u.Host, name: opts.Name, hostname: opts.Hostname, timeout: opts.Timeout,
		procID: strconv.Itoa(os.Getpid())}
	if s.name == "" {
		s.name = "syslog"
	}
	if s.hostname == "" {
		s.hostname, _ = os.Hostname()
	}
	s.hostname = printableASCII(s.hostname, 255)
	if s.timeout <= 0 {
		s.timeout = syslogTimeout
	}
	return s, nil
}

// Name returns the sink's name.
func (s *Syslog) Name() string { return s.name }

// Deliver sends every event; over TCP it returns once they are written.
func (s *Syslog) Deliver(ctx context.Context, events []tokenvault.AuditEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && s.network == "tcp" && !alive(s.conn) {
		s.conn.Close()
		s.conn = nil
	}
	if s.conn == nil {
		d := net.Dialer{Timeout: s.timeout}
		c, err := d.DialContext(ctx, s.network, s.addr)
		if err != nil {
			return fmt.Errorf("auditexport: syslog: %w", err)
		}
		s.conn = c
	}
	deadline := time.Now().Add(s.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	s.conn.SetWriteDeadline(deadline)
	for _, ev := range events {
		msg, err := FormatRFC5424(ev, s.hostname, s.procID)
		if err != nil {
			return err
		}
		if s.network == "tcp" {
			msg = append([]byte(strconv.Itoa(len(msg))+" "), msg...)
		}
		if _, err := s.conn.Write(msg); err != nil {
			s.conn.Close()
			s.conn = nil
			return fmt.Errorf("auditexport: syslog: %w", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// alive reports whether the collector has not closed the TCP connection:
// a write to a connection the peer closed succeeds once, into the void,
// so a closed one is found by reading (a collector sends nothing) before
// writing.
func alive(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(time.Millisecond))
	defer c.SetReadDeadline(time.Time{})
	var b [64]byte
	_, err := c.Read(b[:])
	var ne net.Error
	return err == nil || (errors.As(err, &ne) && ne.Timeout())
}

// Close closes the connection, if any.
func (s *Syslog) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	err := s.conn.Close()
	s.conn = nil
	return err
}

// FormatRFC5424 renders ev as an RFC 5424 syslog message (without the
// TCP framing): see Syslog. hostname and procID go in their fields as
// given ("-" when empty).
func FormatRFC5424(ev tokenvault.AuditEvent, hostname, procID string) ([]byte, error) {
	body, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("auditexport: encode event: %w", err)
	}
	ts := ev.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	msg := fmt.Appendf(nil, "<%d>1 %s %s %s %s %s - ", syslogPRI, ts, nilValue(printableASCII(hostname, 255)),
		syslogApp, nilValue(printableASCII(procID, 128)), syslogMsgID)
	return append(msg, body...), nil
}

// printableASCII keeps the characters RFC 5424 allows in header fields
// (PRINTUSASCII, 33 to 126), up to n of them.
func printableASCII(s string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < n; i++ {
		if s[i] >= 33 && s[i] <= 126 {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func nilValue(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
