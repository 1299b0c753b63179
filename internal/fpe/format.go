package fpe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Separators are the characters a Format keeps in place when its alphabet
// does not hold them: "123-45-6789" enciphers as nine digits and keeps its
// dashes.
const Separators = " -"

// A Format enciphers the characters of a value that are in its alphabet
// and keeps its separators (Separators) where they are. Any other
// character is ErrNumeral.
type Format struct {
	Alphabet *Alphabet
}

// Encrypt enciphers value under tweak. Errors: ErrNumeral, ErrTooShort,
// ErrTooLong, ErrTweak.
func (fm Format) Encrypt(f *FF1, value string, tweak []byte) (string, error) {
	return fm.run(f, value, tweak, true)
}

// Decrypt deciphers what Encrypt enciphered, with its errors.
func (fm Format) Decrypt(f *FF1, value string, tweak []byte) (string, error) {
	return fm.run(f, value, tweak, false)
}

func (fm Format) run(f *FF1, value string, tweak []byte, enc bool) (string, error) {
	if utf8.RuneCountInString(value) > MaxLen {
		return "", fmt.Errorf("%w: more than %d characters", ErrTooLong, MaxLen)
	}
	if !utf8.ValidString(value) {
		return "", fmt.Errorf("%w: value is not valid UTF-8", ErrNumeral)
	}
	a := fm.Alphabet
	x := make([]uint16, 0, len(value))
	i := 0
	for _, c := range value {
		i++
		if n, ok := a.numeral(c); ok {
			x = append(x, n)
		} else if !strings.ContainsRune(Separators, c) {
			return "", fmt.Errorf("%w: character %d", ErrNumeral, i)
		}
	}
	var y []uint16
	var err error
	if enc {
		y, err = f.Encrypt(a.Size(), x, tweak)
	} else {
		y, err = f.Decrypt(a.Size(), x, tweak)
	}
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(value))
	j := 0
	for _, c := range value {
		if _, ok := a.numeral(c); ok {
			b.WriteRune(a.chars[y[j]])
			j++
		} else {
			b.WriteRune(c)
		}
	}
	return b.String(), nil
}
