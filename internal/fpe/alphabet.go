package fpe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// An Alphabet maps characters to numerals: the i-th character is numeral
// i, and the alphabet's size is the radix. Immutable once made.
type Alphabet struct {
	chars []rune
	ascii [128]int32 // numeral+1 of an ASCII character, 0 if absent
	other map[rune]uint16
}

// Named alphabets. Digits and Base36 are the radix 10 and 36 alphabets of
// the standard's samples.
const (
	Digits       = "0123456789"
	Base36       = "0123456789abcdefghijklmnopqrstuvwxyz"
	Alphanumeric = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// NewAlphabet returns the alphabet of the characters of s, in order. It
// returns ErrRadix for fewer than 2 or more than MaxRadix characters, a
// character repeated, or s not valid UTF-8.
func NewAlphabet(s string) (*Alphabet, error) {
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("%w: alphabet is not valid UTF-8", ErrRadix)
	}
	a := &Alphabet{chars: []rune(s)}
	if n := len(a.chars); n < 2 || n > MaxRadix {
		return nil, fmt.Errorf("%w: alphabet of %d characters, want 2 to %d", ErrRadix, n, MaxRadix)
	}
	for i, c := range a.chars {
		if _, dup := a.numeral(c); dup {
			return nil, fmt.Errorf("%w: alphabet repeats a character (position %d)", ErrRadix, i+1)
		}
		if c < 128 {
			a.ascii[c] = int32(i) + 1
			continue
		}
		if a.other == nil {
			a.other = make(map[rune]uint16)
		}
		a.other[c] = uint16(i)
	}
	return a, nil
}

// Radix returns the alphabet of the first radix characters of Base36, the
// standard's convention for radix up to 36. It returns ErrRadix outside 2
// to 36.
func Radix(radix int) (*Alphabet, error) {
	if radix < 2 || radix > len(Base36) {
		return nil, fmt.Errorf("%w: radix %d is not within 2 to 36", ErrRadix, radix)
	}
	return NewAlphabet(Base36[:radix])
}

// Size is the alphabet's radix.
func (a *Alphabet) Size() int { return len(a.chars) }

// String is the alphabet's characters.
func (a *Alphabet) String() string { return string(a.chars) }

// Contains reports whether c is in the alphabet.
func (a *Alphabet) Contains(c rune) bool {
	_, ok := a.numeral(c)
	return ok
}

func (a *Alphabet) numeral(c rune) (uint16, bool) {
	if c >= 0 && c < 128 {
		n := a.ascii[c]
		return uint16(n - 1), n != 0
	}
	n, ok := a.other[c]
	return n, ok
}

// Numerals converts s to numerals. It returns ErrNumeral, naming the
// position only, for a character not in the alphabet.
func (a *Alphabet) Numerals(s string) ([]uint16, error) {
	out := make([]uint16, 0, len(s))
	i := 0
	for _, c := range s {
		i++
		n, ok := a.numeral(c)
		if !ok {
			return nil, fmt.Errorf("%w: character %d", ErrNumeral, i)
		}
		out = append(out, n)
	}
	return out, nil
}

// Text converts numerals (each below Size) back to characters.
func (a *Alphabet) Text(x []uint16) string {
	var b strings.Builder
	b.Grow(len(x))
	for _, n := range x {
		b.WriteRune(a.chars[n])
	}
	return b.String()
}

// EncryptString enciphers s, whose characters are all in a, under tweak.
// Errors: those of FF1.Encrypt, ErrNumeral for a character not in a, and
// ErrTooLong for more than MaxLen characters.
func (f *FF1) EncryptString(a *Alphabet, s string, tweak []byte) (string, error) {
	return f.runString(a, s, tweak, true)
}

// DecryptString deciphers what EncryptString enciphered, with its errors.
func (f *FF1) DecryptString(a *Alphabet, s string, tweak []byte) (string, error) {
	return f.runString(a, s, tweak, false)
}

func (f *FF1) runString(a *Alphabet, s string, tweak []byte, enc bool) (string, error) {
	// Refuse a long value before converting it.
	if utf8.RuneCountInString(s) > MaxLen {
		return "", fmt.Errorf("%w: more than %d characters", ErrTooLong, MaxLen)
	}
	x, err := a.Numerals(s)
	if err != nil {
		return "", err
	}
	var y []uint16
	if enc {
		y, err = f.Encrypt(a.Size(), x, tweak)
	} else {
		y, err = f.Decrypt(a.Size(), x, tweak)
	}
	if err != nil {
		return "", err
	}
	return a.Text(y), nil
}
