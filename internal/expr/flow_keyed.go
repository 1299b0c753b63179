package expr

import (
	"unicode"

	"github.com/tokenvault/tokenvault/internal/fpe"
)

// The flow rules of the filters that draw at random (alias filters) or
// encipher under the tenant's key (fpe): what they keep shows, what they
// draw or encipher does not.

// random is a character drawn at random from classes cls.
func random(cls class) achar { return achar{cls: cls, exact: -1, opaque: true} }

// aliasCardFlow: the BIN and last four (when kept) as they are, every
// other digit random but the last random one, which fixes the Luhn check
// and so is a function of the kept digits; separators kept.
func aliasCardFlow(s []achar, a []arg) *aval {
	n, ok := cardShape(s)
	if !ok {
		return blobOf(str(s), vStr)
	}
	first, last := 0, 0
	if optBool(a, 0) {
		first = CardBINLength(n)
	}
	if optBool(a, 1) {
		last = 4
	}
	if n <= first+last {
		return failed()
	}
	out := make([]achar, len(s))
	var kept Sources
	d, lastRandom := 0, -1
	for i, c := range s {
		out[i] = c
		if c.is(clDigit) {
			if d >= first && d < n-last {
				out[i], lastRandom = random(clDigit), i
			} else {
				kept = kept.Union(c.clear)
			}
			d++
		}
	}
	// The last random digit is changed to pass or fail the Luhn check as
	// asked: it is a function of the kept digits, which it shows.
	out[lastRandom].clear = kept
	return str(out)
}

// aliasFormatFlow: letters and digits become random ones of their class
// and other characters stay, so an unknown character whose class is not
// one of digit, upper and lower letter shows itself (it may stay as it
// is, and which it is tells its class).
func aliasFormatFlow(s []achar, a []arg) *aval {
	first, last := optInt(a, 0), optInt(a, 1)
	if first+last >= len(s) {
		return failed()
	}
	out := make([]achar, len(s))
	for i, c := range s {
		if i < first || i >= len(s)-last {
			out[i] = c
			continue
		}
		switch {
		case c.konst:
			switch {
			case unicode.IsDigit(c.r):
				out[i] = random(clDigit)
			case unicode.IsUpper(c.r):
				out[i] = random(clUpper)
			case unicode.IsLetter(c.r):
				out[i] = random(clLower)
			default:
				out[i] = c
			}
		case c.cls == clDigit || c.cls == clUpper || c.cls == clLower:
			out[i] = random(c.cls)
		default:
			d := c.derived(c.cls | clDigit | clUpper | clLower)
			d.opaque = true
			out[i] = d
		}
	}
	return str(out)
}

// aliasLengthFlow: every character but the kept ones random.
func aliasLengthFlow(s []achar, a []arg) *aval {
	first, last := optInt(a, 0), optInt(a, 1)
	if first+last >= len(s) {
		return failed()
	}
	out := make([]achar, len(s))
	for i, c := range s {
		out[i] = c
		if i >= first && i < len(s)-last {
			out[i] = random(clDigit | clUpper | clLower)
		}
	}
	return str(out)
}

// fpeFlow: FF1 under the tenant's key. A card transformation keeps the
// BIN and last four it names and enciphers the digits between; a format
// enciphers the characters of its alphabet and keeps spaces and dashes in
// place, so an unknown character that may be either shows itself by
// where the result keeps it.
func fpeFlow(s []achar, a []arg) *aval {
	tr, err := fpe.Named(a[0].s)
	if err != nil {
		return failed()
	}
	keyed := func(cls class) achar { return achar{cls: cls, exact: -1, opaque: true} }
	if c, ok := tr.(fpe.Card); ok {
		n, ok := cardShape(s)
		if !ok {
			return blobOf(str(s), vStr)
		}
		if n < 12 || n > 19 {
			return failed()
		}
		lo, hi := 0, n
		if c.KeepBIN {
			lo = 6
		}
		if c.KeepLast4 {
			hi = n - 4
		}
		out := make([]achar, len(s))
		var enciphered []int
		d := 0
		for i, ch := range s {
			out[i] = ch
			if ch.is(clDigit) {
				if d >= lo && d < hi {
					out[i] = keyed(clDigit)
					enciphered = append(enciphered, i)
				}
				d++
			}
		}
		return str(codebook(s, out, enciphered, 10))
	}
	alpha := tr.(fpe.Format).Alphabet
	var in class
	for _, r := range alpha.String() {
		in |= classOf(r)
	}
	out := make([]achar, len(s))
	var enciphered []int
	for i, c := range s {
		switch {
		case c.konst && alpha.Contains(c.r):
			out[i] = keyed(in)
			enciphered = append(enciphered, i)
		case c.konst && (c.r == ' ' || c.r == '-'):
			out[i] = c
		case c.konst:
			return failed()
		case c.is(in):
			out[i] = keyed(in)
			enciphered = append(enciphered, i)
		default:
			d := c.derived(c.cls | in)
			d.opaque = true
			out[i] = d
			enciphered = append(enciphered, i)
		}
	}
	return str(codebook(s, out, enciphered, alpha.Size()))
}

// codebook returns out, the result of enciphering the characters of s at
// positions enciphered in an alphabet of radix characters, with every
// enciphered character showing in clear what those characters of s show
// when fewer than fpe.MinDomain values of them vary with the data (radix
// to the number of them that are not constants, or are drawn at random).
// FF1 is a permutation per tenant: over so few values its output is a
// codebook that anyone who sees the ids of a few known values reads back
// (`slice: 8, 1 | pad_left: 6, '0' | fpe: 'digits'` is ten entries), and
// the standard requires at least fpe.MinDomain values for that reason.
func codebook(s, out []achar, enciphered []int, radix int) []achar {
	if len(enciphered) < fpe.MinLen(radix) {
		return out // FF1 refuses it when it is evaluated: nothing is shown
	}
	var shown Sources
	domain := 1
	for _, i := range enciphered {
		c := s[i]
		if c.konst || c.clear.Empty() {
			continue // a constant, or drawn at random: nothing to read back
		}
		shown = shown.Union(c.clear)
		if domain < fpe.MinDomain {
			domain *= radix
		}
	}
	if domain >= fpe.MinDomain || shown.Empty() {
		return out
	}
	for _, i := range enciphered {
		out[i].clear = out[i].clear.Union(shown)
	}
	return out
}
