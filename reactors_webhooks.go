package tokenvault

import (
	"bytes"
	"context"
	"crypto/hmac"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"github.com/tokenvault/tokenvault/internal/backoff"
	"github.com/tokenvault/tokenvault/internal/reactors"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/webhooks"
)

// Webhook is the JSON body POSTed to the callback_url of an asynchronous
// reactor invocation. Exactly one of Result and Error is set.
//
// The body is signed: the header SVC-Signature is "sha256=" followed by the
// hex HMAC-SHA256 of the exact body bytes, keyed with the tenant's webhook
// secret (see WebhookSecret). Receivers should compare it in constant time
// and may use InvocationID to drop duplicates: a delivery is retried when
// the receiver does not answer 2xx.
//
// It is signed the Standard Webhooks way too, as events to webhook
// subscriptions are: webhook-id is the invocation id, webhook-timestamp
// the time of the attempt, webhook-signature "v1," and the signature
// under the same secret in its Standard Webhooks form
// (CallbackSecretStandard), so a receiver may check it with
// webhooks.Verify instead.
type Webhook struct {
	InvocationID string           `json:"invocation_id"`
	ReactorID    string           `json:"reactor_id"`
	TenantID     string           `json:"tenant_id"`
	Status       string           `json:"status"` // "succeeded" or "failed"
	Result       *ReactorResponse `json:"result,omitempty"`
	Error        *WebhookError    `json:"error,omitempty"`
	DeliveredAt  time.Time        `json:"delivered_at"`
}

// WebhookError is the problem an asynchronous invocation ended with, in
// the shape of the HTTP error bodies.
type WebhookError = reactors.CallbackError

// Webhook delivery headers.
const (
	WebhookSignatureHeader = "SVC-Signature"
	webhookAttempts        = 5
)

// WebhookSecret returns the hex secret that signs the caller's tenant's
// webhooks. Requires tenant:read.
//
// Returns Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without tenant:read, or
// Internal.
func (v *Vault) WebhookSecret(ctx context.Context, key Credential) (string, error) {
	var out string
	err := v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTenantRead)
		if err != nil {
			return err
		}
		s, err := reactors.CallbackSecret(t.Tx, p.TenantID)
		out = hex.EncodeToString(s)
		return err
	})
	return out, err
}

// SignWebhook returns the SVC-Signature value of body under secret (the
// hex string WebhookSecret returns). A secret that is not 32 bytes of hex
// (empty, say, from an unset variable) is an error, never a signature
// under a weak key.
//
// Returns a plain error, of no Kind (ErrorKind says Internal), for such a
// secret.
func SignWebhook(secret string, body []byte) (string, error) {
	key, err := reactors.ParseCallbackSecret(secret)
	if err != nil {
		return "", err
	}
	return reactors.SignCallback(key, body), nil
}

// CallbackSecretStandard returns the Standard Webhooks form ("whsec_"
// and the base64 of its bytes) of the hex secret WebhookSecret returns,
// for webhooks.Verify on a reactor callback. A secret that is not 32
// bytes of hex is an error (a plain error, of no Kind: ErrorKind says
// Internal).
func CallbackSecretStandard(secret string) (string, error) {
	key, err := reactors.ParseCallbackSecret(secret)
	if err != nil {
		return "", err
	}
	return reactors.StandardCallbackSecret(key), nil
}

// VerifyWebhook reports whether signature (an SVC-Signature header) signs
// body under secret, comparing in constant time; false for a malformed
// secret. For receivers written in Go.
func VerifyWebhook(secret string, body []byte, signature string) bool {
	want, err := SignWebhook(secret, body)
	return err == nil && hmac.Equal([]byte(want), []byte(signature))
}

// Bounds on one tenant's asynchronous work. Past either, InvokeReactor
// with a callback_url is Unavailable (retry later) for that tenant only, so
// one tenant cannot pile up goroutines without limit or take what others
// need. The runs themselves share the tenant's code slots
// (Options.Code.ConcurrencyPerTenant) with its synchronous calls; a
// webhook being delivered or retried holds no slot and no worker.
const (
	// MaxAsyncInvocations bounds a tenant's asynchronous invocations
	// waiting for a worker or running.
	MaxAsyncInvocations = 64
	// MaxPendingWebhooks bounds a tenant's webhooks being delivered,
	// retries included.
	MaxPendingWebhooks = 256
)

// asyncCount is one tenant's asynchronous work in progress.
type asyncCount struct{ running, delivering int }

// startAsync runs inv in the background, for up to timeout, and delivers
// its outcome to url. Close cancels runs and deliveries in progress; after
// Close, and past a tenant's bounds, it refuses.
func (v *Vault) startAsync(inv *invocation, url string, timeout time.Duration) error {
	v.asyncMu.Lock()
	defer v.asyncMu.Unlock()
	if v.closed {
		return unit.Errorf(Unavailable, "the vault is closing")
	}
	c := v.asyncByTenant[inv.tenantID]
	if c == nil {
		c = &asyncCount{}
		v.asyncByTenant[inv.tenantID] = c
	}
	if c.running >= MaxAsyncInvocations || c.delivering >= MaxPendingWebhooks {
		return unit.Errorf(Unavailable, "too many asynchronous invocations of this tenant in progress; retry later")
	}
	c.running++
	v.asyncRunning++
	v.async.Add(1)
	go func() {
		defer v.async.Done()
		ctx, cancel := context.WithTimeout(v.bg, timeout)
		res, err := v.runInvocation(ctx, inv, timeout)
		cancel()
		v.asyncMu.Lock()
		c.running--
		c.delivering++
		v.asyncRunning--
		v.asyncDelivering++
		v.asyncMu.Unlock()
		v.emitInvocationEnd(inv, err)
		hook := Webhook{InvocationID: inv.id, ReactorID: inv.reactorID, TenantID: inv.tenantID, Status: "succeeded", Result: res}
		if err != nil {
			hook.Status, hook.Result = "failed", nil
			hook.Error = reactors.CallbackErrorOf(err)
		}
		v.deliver(inv.tenantID, url, hook)
		v.asyncMu.Lock()
		v.asyncDelivering--
		if c.delivering--; c.running == 0 && c.delivering == 0 {
			delete(v.asyncByTenant, inv.tenantID)
		}
		v.asyncMu.Unlock()
	}()
	return nil
}

// deliver POSTs hook, retrying with exponential backoff (jittered, see
// internal/backoff) until the receiver answers 2xx, webhookAttempts tries
// are spent, or the Vault closes.
func (v *Vault) deliver(tid, url string, hook Webhook) {
	outcome, attempts := v.tryDeliver(tid, url, hook)
	if v.metrics != nil {
		v.metrics.WebhookDelivered(outcome, attempts)
	}
}

// tryDeliver is deliver, returning how it ended and after how many POSTs.
func (v *Vault) tryDeliver(tid, url string, hook Webhook) (WebhookOutcome, int) {
	var secret []byte
	err := v.view(v.bg, func(t *txn) error {
		var err error
		secret, err = reactors.CallbackSecret(t.Tx, tid)
		return err
	})
	if err != nil {
		v.logger.Error("tokenvault: webhook not delivered", "invocation", hook.InvocationID, "err", err)
		if v.bg.Err() != nil {
			return WebhookCanceled, 0
		}
		return WebhookNotSent, 0
	}
	wait := backoff.Backoff{Base: v.webhookBackoff}
	for attempt := 1; ; attempt++ {
		hook.DeliveredAt = v.now().UTC()
		body, _ := json.Marshal(hook)
		std, err := webhooks.Headers(hook.InvocationID, hook.DeliveredAt, body, reactors.StandardCallbackSecret(secret))
		if err == nil {
			err = v.post(url, body, reactors.SignCallback(secret, body), std)
		}
		if err == nil {
			return WebhookOK, attempt
		}
		if attempt == webhookAttempts {
			v.logger.Warn("tokenvault: webhook delivery failed", "invocation", hook.InvocationID, "attempts", attempt, "err", err)
			return WebhookFailed, attempt
		}
		select {
		case <-v.bg.Done():
			return WebhookCanceled, attempt
		case <-time.After(wait.Next()):
		}
	}
}

type webhookStatusError int

func (e webhookStatusError) Error() string { return "receiver answered " + http.StatusText(int(e)) }

func (v *Vault) post(url string, body []byte, signature string, std http.Header) error {
	ctx, cancel := context.WithTimeout(v.bg, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, vs := range std {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(WebhookSignatureHeader, signature)
	res, err := v.httpClient.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return webhookStatusError(res.StatusCode)
	}
	return nil
}
