package auditexport

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/backoff"
)

// SignatureHeader carries an HTTP delivery's signature:
// "t=<unix seconds>,sha256=<hex>", the HMAC-SHA256, keyed with the shared
// secret, of the decimal timestamp, a dot, and the exact body bytes.
const SignatureHeader = "Tokenvault-Audit-Signature"

// HTTP defaults.
const (
	// DefaultHTTPBatch is the most events one POST carries.
	DefaultHTTPBatch = 100
	// DefaultHTTPAttempts is how many times one POST is tried before the
	// delivery fails (and the Vault offers it again later).
	DefaultHTTPAttempts = 3
	// MinHTTPSecret is the shortest secret NewHTTP accepts, in bytes.
	MinHTTPSecret = 16
)

// HTTPOptions configure an HTTP sink. Zero values mean the defaults.
type HTTPOptions struct {
	// Name is the sink's name (tokenvault.AuditSink). Empty: "http".
	Name string
	// Client sends the POSTs. Nil: a client with a 30 s timeout.
	Client *http.Client
	// Batch is the most events one POST carries. Zero: DefaultHTTPBatch.
	Batch int
	// Attempts is how many times a POST is tried. Zero:
	// DefaultHTTPAttempts.
	Attempts int
	// Backoff is the longest wait before the second attempt; it doubles
	// with each one. Each wait is jittered: drawn between half of that and
	// all of it, so that sinks failing together do not retry together.
	// Zero: one second.
	Backoff time.Duration
	// Now is the clock of the signature's timestamp. Nil: time.Now.
	Now func() time.Time
}

// HTTP POSTs events in batches to an endpoint the operator chose, as
//
//	{"events": [<tokenvault.AuditEvent>, ...]}
//
// with Content-Type application/json and the header SignatureHeader. A
// batch is acknowledged by any 2xx answer; anything else, or no answer, is
// retried with backoff (Attempts in all), then the delivery fails and the
// Vault offers the events again later. Receivers should verify the
// signature (VerifySignature), reject stale timestamps, and drop events
// whose id they have already stored.
type HTTP struct {
	url      string
	name     string
	secret   []byte
	client   *http.Client
	batch    int
	attempts int
	backoff  time.Duration
	now      func() time.Time
}

var _ tokenvault.AuditSink = (*HTTP)(nil)

// NewHTTP returns a sink POSTing to rawURL (http or https), signing with
// secret (at least MinHTTPSecret bytes).
func NewHTTP(rawURL string, secret []byte, opts HTTPOptions) (*HTTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("auditexport: the HTTP sink's URL must be an absolute http or https URL, not %q", rawURL)
	}
	if len(secret) < MinHTTPSecret {
		return nil, fmt.Errorf("auditexport: the HTTP sink's secret must be at least %d bytes", MinHTTPSecret)
	}
	s := &HTTP{url: rawURL, name: opts.Name, secret: bytes.Clone(secret), client: opts.Client, batch: opts.Batch,
		attempts: opts.Attempts, backoff: opts.Backoff, now: opts.Now}
	if s.name == "" {
		s.name = "http"
	}
	if s.client == nil {
		s.client = &http.Client{Timeout: 30 * time.Second}
	}
	if s.batch <= 0 {
		s.batch = DefaultHTTPBatch
	}
	if s.attempts <= 0 {
		s.attempts = DefaultHTTPAttempts
	}
	if s.backoff <= 0 {
		s.backoff = time.Second
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Name returns the sink's name.
func (s *HTTP) Name() string { return s.name }

// Deliver POSTs the events, Batch at a time.
func (s *HTTP) Deliver(ctx context.Context, events []tokenvault.AuditEvent) error {
	for len(events) > 0 {
		n := min(len(events), s.batch)
		if err := s.post(ctx, events[:n]); err != nil {
			return err
		}
		events = events[n:]
	}
	return nil
}

// post sends one batch, retrying.
func (s *HTTP) post(ctx context.Context, events []tokenvault.AuditEvent) error {
	body, err := json.Marshal(struct {
		Events []tokenvault.AuditEvent `json:"events"`
	}{events})
	if err != nil {
		return fmt.Errorf("auditexport: encode events: %w", err)
	}
	wait := backoff.Backoff{Base: s.backoff}
	var last error
	for attempt := 1; ; attempt++ {
		if last = s.try(ctx, body); last == nil {
			return nil
		}
		if attempt == s.attempts {
			return fmt.Errorf("auditexport: POST to the audit endpoint failed %d times: %w", attempt, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait.Next()):
		}
	}
}

func (s *HTTP) try(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(s.secret, s.now(), body))
	res, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("the endpoint answered %s", res.Status)
	}
	return nil
}

// Sign returns the SignatureHeader value of body, sent at t, under secret.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",sha256=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return m.Sum(nil)
}

// ErrBadSignature is returned by VerifySignature for a header that does
// not sign the body, or is malformed or stale.
var ErrBadSignature = errors.New("auditexport: bad signature")

// VerifySignature checks a SignatureHeader value against body and secret
// in constant time, and that its timestamp is within tolerance of now (a
// tolerance of 0 skips that check). For receivers written in Go.
func VerifySignature(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	tpart, spart, ok := strings.Cut(header, ",")
	ts, ok1 := strings.CutPrefix(tpart, "t=")
	sig, ok2 := strings.CutPrefix(spart, "sha256=")
	if !ok || !ok1 || !ok2 {
		return ErrBadSignature
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrBadSignature
	}
	got, err := hex.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(secret, ts, body)) {
		return ErrBadSignature
	}
	if d := now.Sub(time.Unix(sec, 0)); tolerance > 0 && (d > tolerance || d < -tolerance) {
		return ErrBadSignature
	}
	return nil
}
