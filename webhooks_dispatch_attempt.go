package tokenvault

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/tokenvault/tokenvault/webhooks"
)

// One attempt of one delivery: POST the envelope, signed, to the
// webhook's URL, checked against the outbound policy again (scheme, the
// URL's host, and the dialer's check of the address the name resolves
// to), within WebhookOptions.Timeout, never following a redirect.

// maxRetryAfter caps a receiver's Retry-After.
const maxRetryAfter = 24 * time.Hour

// attempt is how one attempt went.
type attempt struct {
	at       time.Time
	status   int // 0: no answer
	duration time.Duration
	response []byte
	// err is why it failed ("" when the receiver answered 2xx): never a
	// secret, never the URL (which may hold one in its query).
	err        string
	retryAfter time.Duration
}

func (a attempt) ok() bool { return a.err == "" }

// attemptDelivery makes one attempt of j and records how it went.
func (v *Vault) attemptDelivery(j job) {
	a := v.send(j)
	if v.bg.Err() != nil {
		// Closing: the attempt was cut short. Its claim expires after
		// Lease and another instance, or the next Open, tries again.
		return
	}
	v.recordAttempt(j, a)
}

// send POSTs j's delivery once.
func (v *Vault) send(j job) (a attempt) {
	a = attempt{at: v.now().UTC()}
	start := time.Now()
	defer func() { a.duration = time.Since(start) }()
	if msg := v.deliveryURLRefused(j.hook.URL); msg != "" {
		a.err = msg
		return a
	}
	body := deliveryBody(j.rec.Event, a.at)
	secrets := []string{j.hook.Secret}
	if j.hook.PreviousSecret != "" && a.at.Before(j.hook.PreviousUntil) {
		secrets = append(secrets, j.hook.PreviousSecret)
	}
	h, err := webhooks.Headers(j.rec.EventID, a.at, body, secrets...)
	if err != nil {
		a.err = "the webhook's signing secret is malformed"
		return a
	}
	ctx, cancel := context.WithTimeout(v.bg, v.webhooks.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.hook.URL, bytes.NewReader(body))
	if err != nil {
		a.err = "the webhook's URL is not valid"
		return a
	}
	req.Header = h
	req.Header.Set("User-Agent", "tokenvault-webhooks/1")
	res, err := v.httpClient.Do(req)
	if err != nil {
		a.err = transportError(ctx, err, v.webhooks.Timeout)
		return a
	}
	defer res.Body.Close()
	a.status = res.StatusCode
	a.response, _ = io.ReadAll(io.LimitReader(res.Body, maxResponsePrefix))
	switch {
	case res.StatusCode >= 200 && res.StatusCode <= 299:
	case res.StatusCode >= 300 && res.StatusCode <= 399:
		a.err = fmt.Sprintf("the receiver answered %d, a redirect: redirects are not followed", res.StatusCode)
	default:
		a.err = fmt.Sprintf("the receiver answered %d", res.StatusCode)
		switch res.StatusCode {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			a.retryAfter = retryAfter(res.Header.Get("Retry-After"), a.at)
		}
	}
	return a
}

// deliveryBody is the WebhookEvent JSON of an event (its stored
// WebhookEventInfo JSON, as emitted) sent at at.
func deliveryBody(event []byte, at time.Time) []byte {
	b := make([]byte, 0, len(event)+64)
	b = append(b, `{"event":`...)
	b = append(b, event...)
	b = append(b, `,"delivered_at":"`...)
	b = at.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...)
}

// deliveryURLRefused says why the outbound policy refuses rawURL at
// delivery ("" when it does not): the same check as at creation
// (webhookURLProblem), since a webhook stored before the policy changed,
// or under an operator who has since turned private destinations off,
// must not reach inward. The dialer checks the resolved address as well.
func (v *Vault) deliveryURLRefused(rawURL string) string {
	if problem := webhookURLProblem(rawURL, v.allowPrivate); problem != "" {
		return "the webhook's URL " + problem
	}
	return ""
}

// transportError describes a failed request in a closed vocabulary, as
// a proxy's errors are: the transport's own text would tell the tenant
// (who reads it in the deliveries list) about the Vault's network, such as
// the address of its DNS resolver.
func transportError(ctx context.Context, err error, timeout time.Duration) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var ue *url.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.As(err, &ue) && ue.Timeout():
		return fmt.Sprintf("no answer within %s", timeout)
	case errors.Is(err, errPrivateDestination):
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

// retryAfter reads a Retry-After header (seconds, or an HTTP date) at
// now, capped at maxRetryAfter; 0 when absent or unreadable.
func retryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.ParseInt(h, 10, 64); err == nil {
		if s < 0 {
			return 0
		}
		d = time.Duration(min(s, int64(maxRetryAfter/time.Second))) * time.Second
	} else if at, err := http.ParseTime(h); err == nil {
		d = at.Sub(now)
	}
	return max(min(d, maxRetryAfter), 0)
}

// jitter is d drawn between 80% and 120% of its value.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}
