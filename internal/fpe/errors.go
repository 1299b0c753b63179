package fpe

import "errors"

// The errors of this package. Each names what is wrong with an input
// without quoting it: inputs are secrets.
var (
	// ErrKey is a key of the wrong size.
	ErrKey = errors.New("fpe: bad key")
	// ErrRadix is a radix or alphabet out of range (2 to MaxRadix
	// distinct characters).
	ErrRadix = errors.New("fpe: bad radix or alphabet")
	// ErrTooShort is a value with too few characters for its radix
	// (radix^length below MinDomain).
	ErrTooShort = errors.New("fpe: value too short")
	// ErrTooLong is a value of more than MaxLen characters.
	ErrTooLong = errors.New("fpe: value too long")
	// ErrTweak is a tweak of more than MaxTweak bytes.
	ErrTweak = errors.New("fpe: tweak too long")
	// ErrNumeral is a numeral not below the radix, or a character not in
	// the alphabet.
	ErrNumeral = errors.New("fpe: character not in the alphabet")
	// ErrCard is a value that is not a card number for Card: digits with
	// optional space and dash separators, 12 to 19 digits, passing the
	// Luhn check, long enough for what is kept.
	ErrCard = errors.New("fpe: not a card number")
)

// ErrTransformation is an unknown transformation name.
var ErrTransformation = errors.New("fpe: unknown transformation")
