package export

import (
	"strings"

	"filippo.io/age"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ParseRecipient reads an age recipient: an X25519 public key
// ("age1...") or a post-quantum hybrid one ("age1pq1..."). SSH keys are
// refused: a login key is not an encryption key, and age's own keys are
// what a receiving system generates for this (age-keygen). A private key
// given by mistake is refused without being repeated in the error.
//
// Returns Invalid naming field recipient.
func ParseRecipient(s string) (age.Recipient, error) {
	var (
		r   age.Recipient
		err error
	)
	switch {
	case s == "":
		return nil, unit.InvalidField("recipient", "is required: an age public key (age1...)")
	case strings.HasPrefix(strings.ToUpper(s), "AGE-SECRET-KEY-"):
		return nil, unit.InvalidField("recipient", "is a private key: give the recipient's public key (age1...), and keep the private key secret")
	case strings.HasPrefix(s, "age1pq1"):
		r, err = age.ParseHybridRecipient(s)
	case strings.HasPrefix(s, "age1"):
		r, err = age.ParseX25519Recipient(s)
	default:
		return nil, unit.InvalidField("recipient", "must be an age public key (age1... or age1pq1...); ssh keys are not accepted")
	}
	if err != nil {
		return nil, unit.InvalidField("recipient", "is not a valid age public key")
	}
	return r, nil
}

// Recipient is who an export is encrypted to (ParseRecipient).
type Recipient = age.Recipient
