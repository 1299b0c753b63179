package expr

import (
	"errors"
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"
)

// The alias filters make token ids that keep the shape of the value they
// replace (a card number's length and delimiters, a code's letters and
// digits), so a column, a validator or a report built for the value takes
// the token unchanged. They draw from the randomness given to
// [Template.EvalRand]; [Template.Eval] has none and fails on them, so a
// mask, fingerprint or search index (which must be the same every time
// they are computed) can never be random.

// errNoRand is the answer of an alias filter evaluated without randomness.
var errNoRand = errors.New("alias filters make token ids only: this expression is evaluated without randomness")

// maxAliasTries bounds the draws one alias filter makes for an alias that
// differs from its input (see aliasCard), so a value with one random place
// cannot loop.
const maxAliasTries = 32

// randSource draws uniform small numbers from an io.Reader, a buffer of
// bytes at a time.
type randSource struct {
	r   io.Reader
	buf [64]byte
	i   int
}

func newRandSource(r io.Reader) *randSource {
	s := &randSource{r: r}
	s.i = len(s.buf)
	return s
}

// intn returns a uniform number in [0, n), 0 < n <= 256, by rejection
// sampling, so no value is likelier than another.
func (s *randSource) intn(n int) (int, error) {
	limit := 256 - 256%n
	for range 1 << 16 {
		if s.i == len(s.buf) {
			if _, err := io.ReadFull(s.r, s.buf[:]); err != nil {
				return 0, errors.New("reading randomness failed")
			}
			s.i = 0
		}
		b := int(s.buf[s.i])
		s.i++
		if b < limit {
			return b % n, nil
		}
	}
	// Only a reader that keeps giving bytes above limit gets here.
	return 0, errors.New("the randomness source gives no usable bytes")
}

const (
	digitChars = "0123456789"
	lowerChars = "abcdefghijklmnopqrstuvwxyz"
	upperChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	alnumChars = digitChars + upperChars + lowerChars
)

func (s *randSource) pick(chars string) (byte, error) {
	i, err := s.intn(len(chars))
	if err != nil {
		return 0, err
	}
	return chars[i], nil
}

// CardBINLength is how many leading digits of a card number with n digits
// (delimiters not counted) form its BIN: 8 for numbers of 16 digits or
// more, else 6, as PCI DSS counts it since 2022. alias_card reveals this
// many with reveal_bin, and the Vault refuses an alias and mask that
// together show more than these and the last four.
func CardBINLength(n int) int {
	if n >= 16 {
		return 8
	}
	return 6
}

// aliasCard is alias_card[: reveal_bin, reveal_last4, luhn_valid]. The
// digits of the number are replaced by random digits but the BIN (with
// reveal_bin) and the last four (with reveal_last4); spaces and dashes stay
// where they are. The result fails the Luhn check unless luhn_valid, so a
// scanner looking for card numbers never takes a token for one (PCI DSS
// tokenization guidance asks that tokens be distinguishable from card
// numbers). Its digits never equal the number's.
func aliasCard(s string, a []arg, rs *randSource) (any, error) {
	n, ok := cardDigits(s)
	if !ok {
		return nil, errors.New("alias_card needs a card number: digits with spaces or dashes between them")
	}
	first, last := 0, 0
	if optBool(a, 0) {
		first = CardBINLength(n)
	}
	if optBool(a, 1) {
		last = 4
	}
	luhnValid := optBool(a, 2)
	if n <= first+last || luhnValid && n == first+last+1 && LuhnValid(s) {
		return nil, fmt.Errorf("alias_card needs more digits than it reveals (%d of %d), so that some are random", first+last, n)
	}
	b := []byte(s)
	for range maxAliasTries {
		d, lastRandom := 0, -1
		for i, c := range b {
			if !isDigit(c) {
				continue
			}
			if d >= first && d < n-last {
				r, err := rs.pick(digitChars)
				if err != nil {
					return nil, err
				}
				b[i], lastRandom = r, i
			}
			d++
		}
		// Changing one digit changes the Luhn sum modulo 10 (doubled or
		// not, the ten digits give ten different contributions), so one
		// random digit decides validity either way.
		if LuhnValid(string(b)) != luhnValid {
			for c := byte('0'); c <= '9'; c++ {
				if b[lastRandom] = c; LuhnValid(string(b)) == luhnValid {
					break
				}
			}
		}
		if string(b) != s {
			return string(b), nil
		}
	}
	return nil, errors.New("alias_card found no alias that differs from the number")
}

// LuhnValid reports whether the digits of s pass the Luhn (mod 10) check
// every card number passes; other characters (spaces, dashes) are skipped.
func LuhnValid(s string) bool {
	sum, double := 0, false
	for i := len(s) - 1; i >= 0; i-- {
		if !isDigit(s[i]) {
			continue
		}
		d := int(s[i] - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// aliasPreserveFormat is alias_preserve_format[: first, last]: letters
// become random letters of the same case, digits random digits, and
// everything else stays; the first and last characters are kept.
func aliasPreserveFormat(s string, a []arg, rs *randSource) (any, error) {
	return aliasRunes("alias_preserve_format", s, a, rs, func(r rune) string {
		switch {
		case unicode.IsDigit(r):
			return digitChars
		case unicode.IsUpper(r):
			return upperChars
		case unicode.IsLetter(r):
			return lowerChars
		}
		return ""
	})
}

// aliasPreserveLength is alias_preserve_length[: first, last]: every
// character becomes a random letter or digit, punctuation included; the
// first and last characters are kept.
func aliasPreserveLength(s string, a []arg, rs *randSource) (any, error) {
	return aliasRunes("alias_preserve_length", s, a, rs, func(rune) string { return alnumChars })
}

// aliasRunes replaces each character but the first and last (a[0], a[1],
// default 0) with a random one of the characters class gives it ("" keeps
// it). It is an error for nothing to be replaced: the alias would be the
// value itself.
func aliasRunes(name, s string, a []arg, rs *randSource, class func(rune) string) (any, error) {
	first, last := optInt(a, 0), optInt(a, 1)
	n := utf8.RuneCountInString(s)
	if first+last >= n {
		return nil, fmt.Errorf("%s keeps %d of %d characters: none would be random", name, first+last, n)
	}
	out := make([]byte, 0, len(s))
	for range maxAliasTries {
		out = out[:0]
		random, i := false, 0
		for _, r := range s {
			chars := ""
			if i >= first && i < n-last {
				chars = class(r)
			}
			i++
			if chars == "" {
				out = utf8.AppendRune(out, r)
				continue
			}
			c, err := rs.pick(chars)
			if err != nil {
				return nil, err
			}
			out, random = append(out, c), true
		}
		if !random {
			return nil, fmt.Errorf("%s: no letter or digit is left to replace", name)
		}
		// A draw that gives the value back would make the value its own
		// id; draw again.
		if string(out) != s {
			return string(out), nil
		}
	}
	return nil, fmt.Errorf("%s found no alias that differs from the value", name)
}

func optBool(a []arg, i int) bool { return len(a) > i && a[i].b }
func optInt(a []arg, i int) int {
	if len(a) > i {
		return a[i].n
	}
	return 0
}
