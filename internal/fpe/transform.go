package fpe

import (
	"fmt"
	"strings"
)

// A Transformation enciphers and deciphers values of one shape: a
// [Format] over an alphabet, or a [Card].
type Transformation interface {
	Encrypt(f *FF1, value string, tweak []byte) (string, error)
	Decrypt(f *FF1, value string, tweak []byte) (string, error)
}

// Transformation names ([Named]).
const (
	NameDigits       = "digits"       // 0-9, radix 10
	NameAlphanumeric = "alphanumeric" // 0-9A-Za-z, radix 62
	NameBase36       = "base36"       // 0-9a-z, radix 36 (the standard's samples)
	NameCard         = "card"         // prefix of the card names, see Named
)

// Named returns the transformation of a name: "digits", "alphanumeric",
// "base36", or "card" followed by any of "_bin", "_last4", "_luhn" in that
// order ("card_bin_last4" keeps the BIN and the last four digits,
// "card_luhn" makes Luhn-valid tokens). It returns ErrTransformation for
// any other name.
func Named(name string) (Transformation, error) {
	var a string
	switch name {
	case NameDigits:
		a = Digits
	case NameAlphanumeric:
		a = Alphanumeric
	case NameBase36:
		a = Base36
	default:
		if c, ok := cardNamed(name); ok {
			return c, nil
		}
		return nil, fmt.Errorf("%w: want digits, alphanumeric, base36 or card[_bin][_last4][_luhn]", ErrTransformation)
	}
	alpha, err := NewAlphabet(a)
	if err != nil {
		panic(err) // the named alphabets are valid
	}
	return Format{Alphabet: alpha}, nil
}

func cardNamed(name string) (Card, bool) {
	rest, ok := strings.CutPrefix(name, NameCard)
	if !ok {
		return Card{}, false
	}
	var c Card
	rest, c.KeepBIN = strings.CutPrefix(rest, "_bin")
	rest, c.KeepLast4 = strings.CutPrefix(rest, "_last4")
	rest, c.LuhnValid = strings.CutPrefix(rest, "_luhn")
	return c, rest == ""
}

// Custom returns the Format of a caller's alphabet: ErrRadix for an
// alphabet NewAlphabet refuses, or one holding a separator (Separators),
// which would make the kept separators ambiguous.
func Custom(alphabet string) (Transformation, error) {
	if strings.ContainsAny(alphabet, Separators) {
		return nil, fmt.Errorf("%w: an alphabet may not hold a space or a dash (they are kept as separators)", ErrRadix)
	}
	a, err := NewAlphabet(alphabet)
	if err != nil {
		return nil, err
	}
	return Format{Alphabet: a}, nil
}
