package events

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/webhooks"
)

// One attempt of one delivery: POST the envelope, signed, to the
// webhook's URL, checked against the outbound policy again (scheme, the
// URL's host, and the dialer's check of the address the name resolves
// to), within WebhookOptions.Timeout, never following a redirect.

// Attempt is how one attempt went.
type Attempt struct {
	At       time.Time
	Status   int // 0: no answer
	Duration time.Duration
	Response []byte
	// Err is why it failed ("" when the receiver answered 2xx): never a
	// secret, never the URL (which may hold one in its query).
	Err string
	// RetryAfter is the wait the receiver asked for (429, 502, 503, 504).
	RetryAfter time.Duration
}

// OK reports whether the receiver acknowledged the delivery (2xx).
func (a Attempt) OK() bool { return a.Err == "" }

// Send POSTs delivery rec to webhook hook once, signed with its secret
// (and its previous one while that still signs), within
// Options.Timeout under ctx.
func (d *Dispatcher) Send(ctx context.Context, hook *Webhook, rec *Delivery) (a Attempt) {
	a = Attempt{At: d.cfg.Now().UTC()}
	start := time.Now()
	defer func() { a.Duration = time.Since(start) }()
	if msg := d.urlRefused(hook.URL); msg != "" {
		a.Err = msg
		return a
	}
	body := Body(rec.Event, a.At)
	secrets := []string{hook.Secret}
	if hook.PreviousSecret != "" && a.At.Before(hook.PreviousUntil) {
		secrets = append(secrets, hook.PreviousSecret)
	}
	h, err := webhooks.Headers(rec.EventID, a.At, body, secrets...)
	if err != nil {
		a.Err = "the webhook's signing secret is malformed"
		return a
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Options.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(body))
	if err != nil {
		a.Err = "the webhook's URL is not valid"
		return a
	}
	req.Header = h
	req.Header.Set("User-Agent", "tokenvault-webhooks/1")
	res, err := d.cfg.HTTPClient.Do(req)
	if err != nil {
		a.Err = outbound.TransportError(ctx, err, d.cfg.Options.Timeout)
		return a
	}
	defer res.Body.Close()
	a.Status = res.StatusCode
	a.Response, _ = io.ReadAll(io.LimitReader(res.Body, MaxResponsePrefix))
	switch {
	case res.StatusCode >= 200 && res.StatusCode <= 299:
	case res.StatusCode >= 300 && res.StatusCode <= 399:
		a.Err = fmt.Sprintf("the receiver answered %d, a redirect: redirects are not followed", res.StatusCode)
	default:
		a.Err = fmt.Sprintf("the receiver answered %d", res.StatusCode)
		switch res.StatusCode {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			a.RetryAfter = outbound.RetryAfter(res.Header.Get("Retry-After"), a.At)
		}
	}
	return a
}

// urlRefused says why the outbound policy refuses rawURL at
// delivery ("" when it does not): the same check as at creation
// (outbound.Policy.ReceiverProblem), since a webhook stored before the policy changed,
// or under an operator who has since turned private destinations off,
// must not reach inward. The dialer checks the resolved address as well.
func (d *Dispatcher) urlRefused(rawURL string) string {
	if problem := d.cfg.Policy.ReceiverProblem(rawURL); problem != "" {
		return "the webhook's URL " + problem
	}
	return ""
}
