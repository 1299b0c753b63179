package tokenvault

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/webhooks"
)

// One attempt of one delivery: POST the envelope, signed, to the
// webhook's URL, checked against the outbound policy again (scheme, the
// URL's host, and the dialer's check of the address the name resolves
// to), within WebhookOptions.Timeout, never following a redirect.

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
	body := events.Body(j.rec.Event, a.at)
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
		a.err = outbound.TransportError(ctx, err, v.webhooks.Timeout)
		return a
	}
	defer res.Body.Close()
	a.status = res.StatusCode
	a.response, _ = io.ReadAll(io.LimitReader(res.Body, events.MaxResponsePrefix))
	switch {
	case res.StatusCode >= 200 && res.StatusCode <= 299:
	case res.StatusCode >= 300 && res.StatusCode <= 399:
		a.err = fmt.Sprintf("the receiver answered %d, a redirect: redirects are not followed", res.StatusCode)
	default:
		a.err = fmt.Sprintf("the receiver answered %d", res.StatusCode)
		switch res.StatusCode {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			a.retryAfter = outbound.RetryAfter(res.Header.Get("Retry-After"), a.at)
		}
	}
	return a
}

// deliveryURLRefused says why the outbound policy refuses rawURL at
// delivery ("" when it does not): the same check as at creation
// (outbound.Policy.ReceiverProblem), since a webhook stored before the policy changed,
// or under an operator who has since turned private destinations off,
// must not reach inward. The dialer checks the resolved address as well.
func (v *Vault) deliveryURLRefused(rawURL string) string {
	if problem := v.outbound.ReceiverProblem(rawURL); problem != "" {
		return "the webhook's URL " + problem
	}
	return ""
}
