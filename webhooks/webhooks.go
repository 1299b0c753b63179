// Package webhooks signs and verifies webhook deliveries the Standard
// Webhooks way (https://www.standardwebhooks.com): the signed content is
// "<webhook-id>.<webhook-timestamp>.<body>", its HMAC-SHA256 under the
// endpoint's secret is sent base64-encoded as "v1,<signature>" in the
// webhook-signature header, several space-separated when more than one
// secret signs (Token Vault sends two during the overlap after a secret's
// rotation). Receivers of Token Vault's events import this package and
// call Verify; it imports nothing of Token Vault.
//
// Why not the specification's own Go module
// (github.com/standard-webhooks/standard-webhooks/libraries, v0.0.1): it
// was read and judged. Its signature is right, but it accepts any secret,
// an empty one included (a receiver with an unset variable would verify
// against a zero-length key), it checks the timestamp only against
// time.Now (no explicit time, so no testable replay window), keeps its
// tolerance in a package variable, formats the signed content through
// fmt, and is an untagged v0.0.1 whose import path differs from its
// module path. What it does fits in this file, so this package implements
// it, refuses secrets of the wrong size, and is tested against the
// specification's published test vector.
package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of a signed delivery.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts every secret's text form: "whsec_" and the standard
// base64 of its bytes.
const SecretPrefix = "whsec_"

// Secret sizes, in bytes: the specification asks for 24 to 64.
const (
	MinSecretBytes = 24
	MaxSecretBytes = 64
)

// Tolerance is how far a delivery's webhook-timestamp may be from the
// receiver's clock, either way, before Verify refuses it as a replay (or a
// clock gone wrong).
const Tolerance = 5 * time.Minute

// Errors of Verify and ParseSecret; Verify wraps them.
var (
	ErrSecret         = errors.New("webhooks: a secret is \"whsec_\" and the base64 of 24 to 64 bytes")
	ErrMissingHeaders = errors.New("webhooks: webhook-id, webhook-timestamp or webhook-signature is missing")
	ErrTimestamp      = errors.New("webhooks: webhook-timestamp is not Unix seconds")
	ErrTooOld         = errors.New("webhooks: webhook-timestamp is too old")
	ErrTooNew         = errors.New("webhooks: webhook-timestamp is in the future")
	ErrNoSignature    = errors.New("webhooks: no signature matches")
)

// ParseSecret returns the bytes of a secret's text form ("whsec_" and the
// standard base64 of 24 to 64 bytes). Any other form or size is
// ErrSecret, never a key: a receiver whose secret variable is unset must
// not verify against an empty key.
func ParseSecret(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, ErrSecret
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) < MinSecretBytes || len(key) > MaxSecretBytes {
		return nil, ErrSecret
	}
	return key, nil
}

// Sign returns the webhook-signature entry ("v1," and the base64
// HMAC-SHA256) of a message with id id, sent at ts, with body body, under
// secret (its text form). A malformed secret is ErrSecret.
func Sign(secret, id string, ts time.Time, body []byte) (string, error) {
	key, err := ParseSecret(secret)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(mac(key, id, ts.Unix(), body)), nil
}

// mac is the HMAC-SHA256 of "<id>.<unix>.<body>" under key.
func mac(key []byte, id string, unix int64, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write(strconv.AppendInt(nil, unix, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a delivery received now: header is the request's headers,
// body its exact bytes (read before any JSON decoding), secret the
// webhook's secret as shown when it was created or rotated. It returns nil
// when one of the v1 signatures in webhook-signature signs the body under
// the secret and the timestamp is within Tolerance of now. Errors:
// ErrSecret, ErrMissingHeaders, ErrTimestamp, ErrTooOld, ErrTooNew,
// ErrNoSignature. Drop duplicates by webhook-id: a delivery may be sent
// more than once, always with the same id.
func Verify(secret string, header http.Header, body []byte) error {
	return VerifyAt(secret, header, body, time.Now())
}

// VerifyAt is Verify at the time now (a receiver's clock, or a test's).
func VerifyAt(secret string, header http.Header, body []byte, now time.Time) error {
	key, err := ParseSecret(secret)
	if err != nil {
		return err
	}
	id, ts, sigs := header.Get(HeaderID), header.Get(HeaderTimestamp), header.Get(HeaderSignature)
	if id == "" || ts == "" || sigs == "" {
		return ErrMissingHeaders
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrTimestamp
	}
	switch at := time.Unix(unix, 0); {
	case now.Sub(at) > Tolerance:
		return ErrTooOld
	case at.Sub(now) > Tolerance:
		return ErrTooNew
	}
	want := mac(key, id, unix, body)
	found := false
	for _, s := range strings.Fields(sigs) {
		version, sig, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		// Every entry is compared, so the time taken does not tell which
		// one matched.
		if err == nil && hmac.Equal(got, want) {
			found = true
		}
	}
	if !found {
		return ErrNoSignature
	}
	return nil
}

// Headers returns the headers of a delivery of body with id id sent at ts,
// signed by each of secrets (text forms; the first is the current one):
// webhook-id, webhook-timestamp and webhook-signature, with Content-Type
// application/json. A malformed secret is ErrSecret.
func Headers(id string, ts time.Time, body []byte, secrets ...string) (http.Header, error) {
	if len(secrets) == 0 {
		return nil, ErrSecret
	}
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		sig, err := Sign(s, id, ts, body)
		if err != nil {
			return nil, err
		}
		sigs = append(sigs, sig)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, strings.Join(sigs, " "))
	return h, nil
}
