package tokenvault

import (
	"crypto/rand"
	"encoding/base64"
)

// webhookSecretPrefix starts every webhook signing secret, as the
// Standard Webhooks convention has it.
const webhookSecretPrefix = "whsec_"

// webhookSecretBytes is how many random bytes a signing secret holds: 32,
// the size of an HMAC-SHA256 key (the convention allows 24 to 64).
const webhookSecretBytes = 32

// newWebhookSecret returns a new signing secret: "whsec_" and the
// standard base64 of webhookSecretBytes random bytes, the form receivers'
// Standard Webhooks libraries take.
func newWebhookSecret() string {
	var b [webhookSecretBytes]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return webhookSecretPrefix + base64.StdEncoding.EncodeToString(b[:])
}
