package events

import (
	"crypto/rand"
	"encoding/base64"
)

// SecretPrefix starts every webhook signing secret, as the Standard
// Webhooks convention has it.
const SecretPrefix = "whsec_"

// secretBytes is how many random bytes a signing secret holds: 32, the
// size of an HMAC-SHA256 key (the convention allows 24 to 64).
const secretBytes = 32

// NewSecret returns a new signing secret: "whsec_" and the standard
// base64 of 32 random bytes, the form receivers' Standard Webhooks
// libraries take.
func NewSecret() string {
	var b [secretBytes]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b[:])
}
