package fpe

import (
	"fmt"
)

// Card enciphers card numbers: 12 to 19 digits passing the Luhn check,
// with optional space and dash separators kept in place.
//
// KeepBIN keeps the first 6 digits and KeepLast4 the last 4; the digits
// between them (at least 6, the shortest digit string FF1 takes) are
// enciphered, with the kept digits in the tweak so that two BINs get
// unrelated permutations. The BIN is 6 digits here even for numbers of 16
// digits or more (where an alias_card BIN is 8): keeping 8 and the last 4
// of a 16-digit number would leave 4 digits, below FF1's domain floor.
//
// By default the result fails the Luhn check, so no scanner takes a token
// for a card number; LuhnValid makes it pass, for systems that validate.
// Both are exact and reversible: a Luhn-valid number is first moved to
// the numbers whose Luhn sum is 1 mod 10 (the last enciphered digit is
// changed, which fixes the sum, a bijection) or left as it is
// (LuhnValid); FF1 is then cycle-walked (applied again while the result
// is outside that set), a permutation of the set. Decrypt walks back and
// restores the digit. The price: the permutation acts on a tenth of the
// enciphered digits' values (10^5 for 6 enciphered digits, the least),
// and a call costs about ten FF1 calls.
type Card struct {
	KeepBIN, KeepLast4, LuhnValid bool
}

const (
	cardMinDigits = 12
	cardMaxDigits = 19
	cardTweakRoom = 2 + 6 + 4 // what Card adds to the caller's tweak
	// MaxCardTweak is the most bytes a caller's tweak may have for Card.
	MaxCardTweak = MaxTweak - cardTweakRoom
)

// Encrypt enciphers the card number value under tweak. Errors: ErrCard
// (not a card number: characters, length, Luhn), ErrTooShort (fewer than
// 6 digits left to encipher), ErrTweak.
func (c Card) Encrypt(f *FF1, value string, tweak []byte) (string, error) {
	return c.run(f, value, tweak, true)
}

// Decrypt deciphers what Encrypt made. Besides Encrypt's errors, a value
// whose Luhn sum is not what Encrypt makes is ErrCard.
func (c Card) Decrypt(f *FF1, value string, tweak []byte) (string, error) {
	return c.run(f, value, tweak, false)
}

func (c Card) run(f *FF1, value string, tweak []byte, enc bool) (string, error) {
	if len(value) > 2*cardMaxDigits {
		return "", fmt.Errorf("%w: more than %d characters", ErrCard, 2*cardMaxDigits)
	}
	digits := make([]uint16, 0, cardMaxDigits)
	for i := range len(value) {
		switch ch := value[i]; {
		case ch >= '0' && ch <= '9':
			digits = append(digits, uint16(ch-'0'))
		case ch != ' ' && ch != '-':
			return "", fmt.Errorf("%w: character %d is not a digit, space or dash", ErrCard, i+1)
		}
	}
	n := len(digits)
	if n < cardMinDigits || n > cardMaxDigits {
		return "", fmt.Errorf("%w: %d digits, want %d to %d", ErrCard, n, cardMinDigits, cardMaxDigits)
	}
	if len(tweak) > MaxCardTweak {
		return "", fmt.Errorf("%w: %d bytes, at most %d for a card", ErrTweak, len(tweak), MaxCardTweak)
	}
	lo, hi := 0, n
	if c.KeepBIN {
		lo = 6
	}
	if c.KeepLast4 {
		hi = n - 4
	}
	if hi-lo < MinLen(10) {
		return "", fmt.Errorf("%w: %d digits left to encipher between what is kept, at least %d",
			ErrTooShort, max(hi-lo, 0), MinLen(10))
	}
	tw := make([]byte, 0, len(tweak)+cardTweakRoom)
	tw = append(tw, tweak...)
	tw = append(tw, 0)
	for _, d := range digits[:lo] {
		tw = append(tw, '0'+byte(d))
	}
	tw = append(tw, 0)
	for _, d := range digits[hi:] {
		tw = append(tw, '0'+byte(d))
	}

	var target uint16 // the Luhn sum (mod 10) of tokens
	if !c.LuhnValid {
		target = 1
	}
	from, to := uint16(0), target // Luhn sums of the input and the output
	if !enc {
		from, to = target, 0
	}
	if luhnSum(digits) != from {
		if enc {
			return "", fmt.Errorf("%w: fails the Luhn check", ErrCard)
		}
		return "", fmt.Errorf("%w: not a token of this card transformation (Luhn sum)", ErrCard)
	}
	if enc {
		setLuhn(digits, hi-1, target)
	}
	mid := digits[lo:hi]
	for {
		var err error
		if enc {
			mid, err = f.Encrypt(10, mid, tw)
		} else {
			mid, err = f.Decrypt(10, mid, tw)
		}
		if err != nil {
			return "", err
		}
		copy(digits[lo:hi], mid)
		if luhnSum(digits) == target {
			break
		}
	}
	if !enc {
		setLuhn(digits, hi-1, to)
	}
	out := []byte(value)
	j := 0
	for i, ch := range out {
		if ch >= '0' && ch <= '9' {
			out[i] = '0' + byte(digits[j])
			j++
		}
	}
	return string(out), nil
}

// luhnSum is the Luhn sum of digits mod 10: 0 for a valid number.
func luhnSum(digits []uint16) uint16 {
	sum := 0
	for i := range digits {
		d := int(digits[len(digits)-1-i])
		if i%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return uint16(sum % 10)
}

// setLuhn changes digits[pos] so that the Luhn sum is want. Every digit
// position moves the sum through all ten values, so one digit fits.
func setLuhn(digits []uint16, pos int, want uint16) {
	for d := range uint16(10) {
		digits[pos] = d
		if luhnSum(digits) == want {
			return
		}
	}
}
