package aliases

import (
	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The display rule of masks and ids (see TokenRequest.ID): what a token's
// mask and id show of its data, decided by the flow analysis of package
// expr (Template.Flow: each filter's rule, over the whole expression), not
// by patterns.
//
//   - A mask of a card number (a card's number, or a plain token whose
//     data is a card-shaped string) shows at most its BIN (6 digits, 8
//     for numbers of 16 or more) and last four, whatever the expression
//     (PCI DSS 3.4.1): Invalid at "mask" otherwise.
//   - An id derived from the data (alias or fpe) is seen by keys that may
//     not read the token, and by logs and events: it shows in clear only
//     characters the mask shows exactly, and for a card number its BIN
//     and last four; a token with no mask, nothing. Invalid at "id".
//
// Randomness (the alias filters) and the tenant's FPE key (fpe) show
// nothing; a function of a character with no secret between (a hash
// with a key written in the expression, a case change, a replace) shows
// it. A filter the analysis has no rule for shows all it reads.

// cardNumberOf returns the variable path and text of a token's card
// number when the rule applies: a card's number, or a plain token whose
// data is a card-shaped string (12 to 19 digits with spaces or dashes
// between them).
func cardNumberOf(typ string, data any) (string, string, bool) {
	switch typ {
	case unit.TypeCard:
		m, ok := data.(map[string]any)
		if !ok {
			return "", "", false
		}
		number, ok := m["number"].(string)
		return "data.number", number, ok
	case unit.TypeToken:
		s, ok := data.(string)
		if n, shaped := cardShaped(s); ok && shaped && n >= 12 && n <= 19 {
			return "data", s, true
		}
	}
	return "", "", false
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

// cardShown returns the characters of a card number that may be shown
// (its BIN and last four) and those that may not.
func cardShown(in *expr.Inputs, path, number string) (shown, hidden expr.Sources) {
	digits := 0
	for i := range len(number) {
		if isDigitByte(number[i]) {
			digits++
		}
	}
	bin := expr.CardBINLength(digits)
	d := 0
	for i := range len(number) { // card-shaped: one byte per character
		chars := in.Chars(path, i, i+1)
		if isDigitByte(number[i]) {
			if d >= bin && d < digits-4 {
				hidden = hidden.Union(chars)
			} else {
				shown = shown.Union(chars)
			}
			d++
		} else {
			shown = shown.Union(chars) // separators: the number's shape
		}
	}
	return shown, hidden
}

// CheckDisplay holds a token's mask (maskExpr: its expression structure,
// nil for none) and its id expression (idTmpl, nil for a literal or
// generated id) to the display rule over the token's data, of type typ,
// adding problems at maskPath and idPath. metadata is the token's, which
// an fpe id may read (fpe_tweaked); no mask shows it, so no id may in
// clear.
func (r *Rules) CheckDisplay(typ string, data any, metadata map[string]string, maskExpr any, idTmpl *expr.Template, maskPath, idPath string, fe unit.FieldErrors) {
	path, number, isCard := cardNumberOf(typ, data)
	if !isCard && idTmpl == nil {
		return // nothing to hold: the rule on masks is the card's
	}
	md := make(map[string]any, len(metadata))
	for k, v := range metadata {
		md[k] = v
	}
	in := expr.Label(map[string]any{"data": r.ExprData(typ, data), "metadata": md})
	var mask expr.Flow
	r.maskFlows(maskExpr, in.Only("data"), &mask) // masks are evaluated over data only
	var shown, hidden expr.Sources
	if isCard {
		shown, hidden = cardShown(in, path, number)
		if !mask.Clear.Intersect(hidden).Empty() {
			fe.Add(maskPath, "the mask would show digits of the card number beyond its BIN (the first %d) "+
				"and last four, more than PCI DSS allows to be displayed", binOf(number))
			return
		}
	}
	if idTmpl == nil {
		return
	}
	allowed := mask.Exact.Union(shown)
	if beyond := idTmpl.Flow(in).Clear.Minus(allowed); !beyond.Empty() {
		if isCard && !beyond.Intersect(hidden).Empty() {
			fe.Add(idPath, "the id would show digits of the card number beyond its BIN (the first %d) and last four, "+
				"more than PCI DSS allows to be displayed", binOf(number))
			return
		}
		fe.Add(idPath, "%s", "the id would show data that the token's mask does not: an id is seen by keys that may "+
			"not read the token and written to logs and events, so it may show in clear only what the mask shows "+
			"(for a card number, its BIN and last four; for a token with no mask, nothing)")
	}
}

// binOf is the BIN length of a card-shaped number.
func binOf(number string) int {
	n := 0
	for i := range len(number) {
		if isDigitByte(number[i]) {
			n++
		}
	}
	return expr.CardBINLength(n)
}

// maskFlows adds the flow of every expression in a mask structure to f.
// Expressions that do not parse show nothing: the token feature refuses
// them when it evaluates the mask.
func (r *Rules) maskFlows(m any, in *expr.Inputs, f *expr.Flow) {
	switch m := m.(type) {
	case string:
		tmpl, ok := r.Templates[m]
		if !ok {
			var err error
			if len(m) > r.MaxExpressionBytes {
				return
			}
			if tmpl, err = expr.Parse(m); err != nil {
				return
			}
		}
		*f = f.Union(tmpl.Flow(in))
	case map[string]any:
		for _, v := range m {
			r.maskFlows(v, in, f)
		}
	case []any:
		for _, v := range m {
			r.maskFlows(v, in, f)
		}
	}
}

func isDigitByte(c byte) bool { return '0' <= c && c <= '9' }

// CheckMaskKeepsID holds a patch's mask (newMask) on a token whose id was
// derived from its data (aliasID: the record's AliasID) and that is not a
// card number (whose id is held to the BIN and last four, which no mask
// narrows): the id was checked against the mask it was created with (the
// record's MaskExpression, none when empty), so the new mask must still
// show exactly, over the stored data (the record's Data, of type typ), all
// the old one did, or the id would show more than the mask. Invalid at
// "mask".
func (r *Rules) CheckMaskKeepsID(aliasID bool, typ string, stored, maskExpression []byte, newMask any, fe unit.FieldErrors) {
	if !aliasID {
		return
	}
	data, err := r.DecodeRecordJSON(stored)
	if err != nil {
		return
	}
	if _, _, isCard := cardNumberOf(typ, data); isCard {
		return
	}
	var oldMask any
	if len(maskExpression) > 0 {
		oldMask, _ = r.DecodeJSON(maskExpression)
	}
	in := expr.Label(map[string]any{"data": r.ExprData(typ, data)})
	var before, after expr.Flow
	r.maskFlows(oldMask, in, &before)
	r.maskFlows(newMask, in, &after)
	if !before.Exact.Minus(after.Exact).Empty() {
		fe.Add("mask", "%s", "the mask would show less than the one the token's id was checked against: the id, "+
			"made from the data, would then show more than the mask")
	}
}
