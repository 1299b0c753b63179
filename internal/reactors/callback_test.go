package reactors

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/webhooks"
)

func TestParseCallbackSecret(t *testing.T) {
	t.Parallel()
	good := strings.Repeat("ab", CallbackSecretSize)
	if key, err := ParseCallbackSecret(good); err != nil || !bytes.Equal(key, bytes.Repeat([]byte{0xab}, CallbackSecretSize)) {
		t.Errorf("ParseCallbackSecret(%q) = %x, %v; want 32 bytes of ab", good, key, err)
	}
	for _, bad := range []string{"", "ab", good[:62], good + "ab", strings.Repeat("zz", CallbackSecretSize)} {
		if key, err := ParseCallbackSecret(bad); err == nil || key != nil {
			t.Errorf("ParseCallbackSecret(%q) = %x, %v; want an error", bad, key, err)
		}
	}
}

func TestSignCallback(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{1}, CallbackSecretSize)
	body := []byte(`{"invocation_id":"i1"}`)
	sig := SignCallback(key, body)
	if !strings.HasPrefix(sig, "sha256=") || len(sig) != len("sha256=")+64 {
		t.Fatalf("SignCallback = %q, want sha256= and 64 hex digits", sig)
	}
	if SignCallback(key, append(body, ' ')) == sig || SignCallback(bytes.Repeat([]byte{2}, CallbackSecretSize), body) == sig {
		t.Error("SignCallback gave one signature for another body or key")
	}
	// The Standard Webhooks form of the key signs headers a receiver
	// verifies with package webhooks.
	std := StandardCallbackSecret(key)
	h, err := webhooks.Headers("i1", time.Now(), body, std)
	if err != nil {
		t.Fatal(err)
	}
	if err := webhooks.Verify(std, h, body); err != nil {
		t.Errorf("webhooks.Verify of a callback signed under StandardCallbackSecret: %v", err)
	}
}
