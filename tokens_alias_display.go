package tokenvault

import (
	"maps"

	"github.com/tokenvault/tokenvault/internal/expr"
)

// The PCI DSS display rule of alias ids (see TokenRequest.ID): what a
// token's alias shows of a card number and what its mask shows, together,
// are at most the BIN and the last four digits.
//
// What an expression shows is found by asking it, not by reading it: the
// alias and the mask are evaluated over the data with each digit of the
// number changed in turn, and a digit is shown when the result changes
// with it. This needs no model of the filters (slice, reveal, card_mask,
// replace, json ... compose freely) and errs on the safe side: a hash of
// the number shows every digit. The alias draws from the same fixed
// sequence each time (probeReader), so only the data changes its result.

// cardNumberOf returns the card number of a token's data, and data with
// the number replaced, when the display rule applies: a card's number, or
// a plain token whose data is a card-shaped string (12 to 19 digits with
// spaces or dashes between them).
func cardNumberOf(typ string, data any) (string, func(number string) any, bool) {
	switch typ {
	case TypeCard:
		m, ok := data.(map[string]any)
		if !ok {
			return "", nil, false
		}
		number, ok := m["number"].(string)
		return number, func(n string) any {
			c := maps.Clone(m)
			c["number"] = n
			return c
		}, ok
	case TypeToken:
		s, ok := data.(string)
		if n, shaped := cardShaped(s); ok && shaped && n >= 12 && n <= 19 {
			return s, func(n string) any { return n }, true
		}
	}
	return "", nil, false
}

// cardShaped counts the digits of s and reports whether s is only digits,
// with spaces and dashes between them.
func cardShaped(s string) (int, bool) {
	n := 0
	for i := range len(s) {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			n++
		case (c == ' ' || c == '-') && i > 0 && i < len(s)-1:
		default:
			return 0, false
		}
	}
	return n, n > 0
}

// checkCardDisplay adds an error at path when the alias (a; nil for a
// patch, whose alias was checked when it was drawn) and the mask of a
// token (maskExpr, nil for none) together show digits of its card number
// beyond the BIN and the last four.
func checkCardDisplay(typ string, data any, a *aliasID, maskExpr any, path string, fe fieldErrors) {
	number, with, ok := cardNumberOf(typ, data)
	if !ok {
		return
	}
	// show renders what the alias and the mask give over data: a change
	// in either shows up in the pair. An error counts as a change.
	show := func(data any) ([2]string, bool) {
		vars := expr.Vars(map[string]any{"data": exprData(typ, data)})
		var alias string
		if a != nil {
			var err error
			if alias, err = (&aliasID{tmpl: a.tmpl, vars: vars}).draw(&probeReader{}); err != nil {
				return [2]string{}, false
			}
		}
		var mask string
		if maskExpr != nil {
			quiet := fieldErrors{}
			mask = stringify(evalMask(maskExpr, vars, "", quiet))
			if len(quiet) > 0 {
				return [2]string{}, false
			}
		}
		return [2]string{alias, mask}, true
	}
	base, ok := show(data)
	if !ok {
		return // prepareAlias and the mask's own check report it
	}
	digits := 0
	for i := range len(number) {
		if isDigitByte(number[i]) {
			digits++
		}
	}
	bin := expr.CardBINLength(digits)
	d := -1
	for i := range len(number) {
		if !isDigitByte(number[i]) {
			continue
		}
		if d++; d < bin || d >= digits-4 {
			continue
		}
		b := []byte(number)
		b[i] = '0' + (b[i]-'0'+1)%10
		if got, ok := show(with(string(b))); !ok || got != base {
			fe.add(path, "the alias id and the mask together would show digits of the card number beyond its BIN "+
				"(the first %d) and last four, more than PCI DSS allows to be displayed", bin)
			return
		}
	}
}

func isDigitByte(c byte) bool { return '0' <= c && c <= '9' }
