package reactors

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"

	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/webhooks"
)

// The signature of an asynchronous invocation's callback: an HMAC-SHA256
// of the exact body under the tenant's callback secret, in the header
// SVC-Signature ("sha256=" and hex), and in its Standard Webhooks form.
// The secret is derived from the tenant's keyring, never stored.

// CallbackSecretSize is the length of a callback secret (an HMAC-SHA256).
const CallbackSecretSize = sha256.Size

// errCallbackSecret is ParseCallbackSecret's refusal: a plain error, of
// no Kind, since a receiver's program, not a caller, gave the secret.
var errCallbackSecret = errors.New("tokenvault: the webhook secret must be the 64 hex digits WebhookSecret returns")

// CallbackSecret derives tenant tid's callback signing secret from its
// keyring: stable, never stored, different for every tenant.
func CallbackSecret(t *unit.Tx, tid string) ([]byte, error) {
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return nil, err
	}
	return ks.MAC([]byte("webhook-signing-secret\x00"), []byte(tid)), nil
}

// ParseCallbackSecret decodes the hex form of a callback secret (what
// WebhookSecret returns). A secret that is not CallbackSecretSize bytes of
// hex (empty, say, from an unset variable) is an error, never a key too
// weak to sign with.
func ParseCallbackSecret(secret string) ([]byte, error) {
	key, err := hex.DecodeString(secret)
	if err != nil || len(key) != CallbackSecretSize {
		return nil, errCallbackSecret
	}
	return key, nil
}

// SignCallback is the SVC-Signature value of body under key.
func SignCallback(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// StandardCallbackSecret is key in the Standard Webhooks form ("whsec_"
// and its base64), which webhooks.Headers and webhooks.Verify take.
func StandardCallbackSecret(key []byte) string {
	return webhooks.SecretPrefix + base64.StdEncoding.EncodeToString(key)
}
