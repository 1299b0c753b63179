package elements_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// checkNoCard fails if held holds the card (leak).
func checkNoCard(t *testing.T, held string) {
	t.Helper()
	if l := leak(held); l != "" {
		t.Error(l)
	}
}

var cvcAlone = regexp.MustCompile(`(^|[^0-9A-Za-z_-])` + cardCVC + `([^0-9A-Za-z_-]|$)|"cvc":`)

// leak says where held holds the card number (with or without its
// spaces) or the CVC as a value of its own (not inside a key or an id,
// which may hold its digits by chance), or "" when it holds neither.
func leak(held string) string {
	for _, n := range []string{cardNumber, "3782 822463 10005", "378282 246310005"} {
		if strings.Contains(held, n) {
			return fmt.Sprintf("the merchant's page holds the card number (%q)", n)
		}
	}
	if loc := cvcAlone.FindStringIndex(held); loc != nil {
		return fmt.Sprintf("the merchant's page holds the CVC: ...%s...", held[max(0, loc[0]-80):min(len(held), loc[1]+80)])
	}
	return ""
}

// TestLeakFinds: the check of the browser tests finds what it looks for.
func TestLeakFinds(t *testing.T) {
	t.Parallel()
	for _, held := range []string{`{"number":"378282246310005"}`, `<input value="3782 822463 10005">`, `{"cvc":"x"}`,
		`{"value":"7391"}`, `7391`, `{"value":{"cvc":7391}}`, `<span>7391</span>`} {
		if leak(held) == "" {
			t.Errorf("leak(%q) finds nothing", held)
		}
	}
	for _, held := range []string{`key_ab7391cd`, `0190f5a2-7391-7b3a`, `<div id="cvc">`, `{"last4":"0005","brand":"amex"}`, `http://localhost:37391/`} {
		if l := leak(held); l != "" {
			t.Errorf("leak(%q) = %q, want nothing", held, l)
		}
	}
}
