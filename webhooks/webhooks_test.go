package webhooks

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The specification's published test vector (standard-webhooks, spec
// "Signature scheme" and its libraries' tests).
const (
	vecSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecTS     = 1614265330
	vecBody   = `{"test": 2432232314}`
	vecSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func vecHeader(sig string) http.Header {
	h := http.Header{}
	h.Set(HeaderID, vecID)
	h.Set(HeaderTimestamp, "1614265330")
	h.Set(HeaderSignature, sig)
	return h
}

func TestSignMatchesTheSpecificationVector(t *testing.T) {
	got, err := Sign(vecSecret, vecID, time.Unix(vecTS, 0), []byte(vecBody))
	if err != nil || got != vecSig {
		t.Fatalf("Sign = %q, %v; want %q", got, err, vecSig)
	}
}

func TestVerify(t *testing.T) {
	at := time.Unix(vecTS, 0)
	other, _ := Sign("whsec_"+strings.Repeat("A", 32), vecID, at, []byte(vecBody))
	cases := []struct {
		name   string
		header http.Header
		body   string
		now    time.Time
		want   error
	}{
		{"vector", vecHeader(vecSig), vecBody, at, nil},
		{"several signatures, the good one last", vecHeader(other + " v2,abc " + vecSig), vecBody, at, nil},
		{"4 min late", vecHeader(vecSig), vecBody, at.Add(4 * time.Minute), nil},
		{"6 min late", vecHeader(vecSig), vecBody, at.Add(6 * time.Minute), ErrTooOld},
		{"6 min early", vecHeader(vecSig), vecBody, at.Add(-6 * time.Minute), ErrTooNew},
		{"body changed", vecHeader(vecSig), `{"test": 2432232315}`, at, ErrNoSignature},
		{"another secret's signature only", vecHeader(other), vecBody, at, ErrNoSignature},
		{"v2 only", vecHeader(strings.Replace(vecSig, "v1", "v2", 1)), vecBody, at, ErrNoSignature},
		{"no signature", vecHeader(""), vecBody, at, ErrMissingHeaders},
	}
	for _, c := range cases {
		if err := VerifyAt(vecSecret, c.header, []byte(c.body), c.now); !errors.Is(err, c.want) {
			t.Errorf("%s: VerifyAt = %v, want %v", c.name, err, c.want)
		}
	}
	h := vecHeader(vecSig)
	h.Set(HeaderTimestamp, "yesterday")
	if err := VerifyAt(vecSecret, h, []byte(vecBody), at); !errors.Is(err, ErrTimestamp) {
		t.Errorf("bad timestamp: %v", err)
	}
	// Verify uses the clock: the vector is years old.
	if err := Verify(vecSecret, vecHeader(vecSig), []byte(vecBody)); !errors.Is(err, ErrTooOld) {
		t.Errorf("Verify of an old message = %v", err)
	}
}

func TestParseSecretRefusesOtherSizes(t *testing.T) {
	for _, s := range []string{"", "whsec_", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_" + strings.Repeat("A", 28),
		"whsec_" + strings.Repeat("A", 88), "whsec_not*base64"} {
		if _, err := ParseSecret(s); !errors.Is(err, ErrSecret) {
			t.Errorf("ParseSecret(%q) = %v", s, err)
		}
		if _, err := Sign(s, "id", time.Now(), nil); !errors.Is(err, ErrSecret) {
			t.Errorf("Sign under %q = %v", s, err)
		}
		if err := VerifyAt(s, vecHeader(vecSig), []byte(vecBody), time.Unix(vecTS, 0)); !errors.Is(err, ErrSecret) {
			t.Errorf("VerifyAt under %q = %v", s, err)
		}
	}
	for _, n := range []int{32, 44, 88} { // 24, 33 and 66 bytes: the last is too many
		_, err := ParseSecret("whsec_" + strings.Repeat("A", n))
		if ok := err == nil; ok != (n*3/4 <= MaxSecretBytes) {
			t.Errorf("%d base64 chars: %v", n, err)
		}
	}
}

func TestHeadersSignWithEverySecret(t *testing.T) {
	old := "whsec_" + strings.Repeat("B", 32)
	at := time.Unix(vecTS, 0)
	h, err := Headers(vecID, at, []byte(vecBody), vecSecret, old)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(h.Get(HeaderSignature))); n != 2 {
		t.Fatalf("%d signatures", n)
	}
	for _, s := range []string{vecSecret, old} {
		if err := VerifyAt(s, h, []byte(vecBody), at); err != nil {
			t.Errorf("under %s: %v", s[:8], err)
		}
	}
	if h.Get("Content-Type") != "application/json" {
		t.Error("no Content-Type")
	}
}
