package expr

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// cardDigits returns the number of digits in a card number. Spaces and
// dashes are allowed as separators ("4242 4242 ..."); anything else means
// the input is not a card number.
func cardDigits(s string) (int, bool) {
	n := 0
	for i := range len(s) {
		switch c := s[i]; {
		case isDigit(c):
			n++
		case c != ' ' && c != '-':
			return 0, false
		}
	}
	return n, true
}

func cardBIN(s string, _ []arg) (any, error) {
	if n, ok := cardDigits(s); !ok || n < 6 {
		return nil, errors.New("card_bin needs a card number of at least 6 digits")
	}
	var b strings.Builder
	for i := 0; b.Len() < 6; i++ {
		if isDigit(s[i]) {
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// cardMask keeps the BIN (first 6 digits) and last 4 digits, the most PCI
// DSS allows to be shown, and any separators in place.
func cardMask(s string, _ []arg) (any, error) {
	n, ok := cardDigits(s)
	if !ok || n < 13 {
		return nil, errors.New("card_mask needs a card number of at least 13 digits")
	}
	b := []byte(s)
	d := 0
	for i, c := range b {
		if isDigit(c) {
			if d >= 6 && d < n-4 {
				b[i] = 'X'
			}
			d++
		}
	}
	return string(b), nil
}

// cardExp formats a card's expiry. The format (default "MM/YY") may use
// MM, YYYY and YY; a two-digit year is taken to be in the 2000s.
func cardExp(v any, a []arg) (any, error) {
	card, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("card_exp needs a card object")
	}
	month, ok1 := wholeNumber(card["expiration_month"])
	year, ok2 := wholeNumber(card["expiration_year"])
	if !ok1 || !ok2 || month < 1 || month > 12 || year < 0 || year > 9999 {
		return nil, errors.New("card_exp needs expiration_month 1 to 12 and a four-digit expiration_year")
	}
	if year < 100 {
		year += 2000
	}
	r := strings.NewReplacer(
		"MM", fmt.Sprintf("%02d", month),
		"YYYY", fmt.Sprintf("%04d", year),
		"YY", fmt.Sprintf("%02d", year%100),
	)
	return r.Replace(optString(a, 0, "MM/YY")), nil
}

// wholeNumber reads a non-negative integer from a JSON number or a string
// of digits, the two ways cards arrive.
func wholeNumber(v any) (int, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case string:
		s = x
	case float64:
		if x < 0 || x > 1e6 || x != float64(int(x)) {
			return 0, false
		}
		return int(x), true
	default:
		return 0, false
	}
	if s == "" || len(s) > 6 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
