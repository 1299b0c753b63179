package events

import "testing"

// TestSecretForm: secrets are "whsec_" and the base64 of 32 bytes, each
// new.
func TestSecretForm(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	if a == b || len(a) != len(SecretPrefix)+44 || a[:6] != SecretPrefix {
		t.Errorf("NewSecret() = %q, %q", a, b)
	}
}
