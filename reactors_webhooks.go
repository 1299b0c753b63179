package tokenvault

import (
	"context"
	"crypto/hmac"
	"encoding/hex"
	"time"

	"github.com/tokenvault/tokenvault/internal/reactors"
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
type Webhook = reactors.Callback

// WebhookError is the problem an asynchronous invocation ended with, in
// the shape of the HTTP error bodies.
type WebhookError = reactors.CallbackError

// WebhookSignatureHeader carries the SVC-Signature of a webhook.
const WebhookSignatureHeader = reactors.CallbackSignatureHeader

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
	MaxAsyncInvocations = reactors.MaxAsyncInvocations
	// MaxPendingWebhooks bounds a tenant's webhooks being delivered,
	// retries included.
	MaxPendingWebhooks = reactors.MaxPendingCallbacks
)

// newAsync is the runner of asynchronous invocations (reactors.Async),
// under bg, posting with the outbound client, reading each tenant's
// callback secret in a transaction of its own and counting deliveries in
// Options.Metrics.
func (v *Vault) newAsync() *reactors.Async {
	return &reactors.Async{
		Background: v.bg, HTTPClient: v.httpClient, Backoff: v.webhookBackoff, Now: v.now, Logger: v.logger,
		Secret: func(ctx context.Context, tid string) ([]byte, error) {
			var secret []byte
			err := v.view(ctx, func(t *txn) error {
				var err error
				secret, err = reactors.CallbackSecret(t.Tx, tid)
				return err
			})
			return secret, err
		},
		Delivered: func(o WebhookOutcome, attempts int) {
			if v.metrics != nil {
				v.metrics.WebhookDelivered(o, attempts)
			}
		},
	}
}

// startAsync runs inv in the background, for up to timeout, and delivers
// its outcome to url (reactors.Async.Start). Close cancels runs and
// deliveries in progress; after Close, and past a tenant's bounds, it
// refuses.
func (v *Vault) startAsync(inv *invocation, url string, timeout time.Duration) error {
	cb := Webhook{InvocationID: inv.id, ReactorID: inv.reactorID, TenantID: inv.tenantID}
	return v.async.Start(cb, url, timeout,
		func(ctx context.Context) (*ReactorResponse, error) { return v.runInvocation(ctx, inv, timeout) },
		func(err error) { v.emitInvocationEnd(inv, err) })
}
