package expr

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// filterSpec declares a filter: the kinds of its parameters (the first
// required of them mandatory), a parse-time check of their values, and the
// function. Checking arguments at parse time means a mistake in a mask or
// fingerprint expression is reported when it is written, not when a token
// happens to exercise it.
//
// A filter has either a text function, which gets its input rendered as
// text (nil as ""), a value function, which gets the value itself, or a
// random function, a text function that also draws random numbers.
type filterSpec struct {
	params   []argKind
	required int
	valid    func(a []arg) error
	text     func(s string, a []arg) (any, error)
	value    func(v any, a []arg) (any, error)
	// random is a text function that draws from the evaluation's
	// randomness: the alias filters (see alias.go).
	random func(s string, a []arg, rs *randSource) (any, error)
	// keyed is a text function that needs the evaluation's keys and
	// resolver (fpe.go).
	keyed func(ev *evaluator, s string, a []arg) (any, error)
	// flow is the filter's rule in the flow analysis (flow_filters.go):
	// what its result shows of what it reads.
	flow func(v *aval, a []arg) *aval
}

// filters is the filter table; doc.go lists it for users, and a test keeps
// the two in step.
var filters = map[string]*filterSpec{
	"last4":       {text: last4},
	"reveal_last": {params: []argKind{intArg, strArg}, required: 1, valid: each(count(0), oneChar(1)), text: revealLast},
	"reveal":      {params: []argKind{intArg, intArg, strArg}, required: 2, valid: each(count(0), count(1), oneChar(2)), text: reveal},
	"slice":       {params: []argKind{intArg, intArg}, required: 1, value: slice},
	"pad_left":    {params: []argKind{intArg, strArg}, required: 1, valid: each(width(0), oneChar(1)), text: pad(true)},
	"pad_right":   {params: []argKind{intArg, strArg}, required: 1, valid: each(width(0), oneChar(1)), text: pad(false)},
	"stringify":   {value: stringify},
	"to_string":   {value: stringify},
	"json":        {params: []argKind{strArg}, required: 1, valid: compilePath, value: selectPath},
	"upcase":      {text: upcase},
	"downcase":    {text: downcase},
	"replace":     {params: []argKind{strArg, strArg}, required: 2, text: replace},
	"remove":      {params: []argKind{strArg}, required: 1, text: remove},
	"split":       {params: []argKind{strArg}, required: 1, text: split},
	"card_bin":    {text: cardBIN},
	"card_mask":   {text: cardMask},
	"card_exp":    {params: []argKind{strArg}, value: cardExp},
	"to_number":   {value: toNumber},
	"to_boolean":  {value: toBoolean},
	"hmac":        {params: []argKind{strArg, strArg}, required: 2, valid: hmacAlgorithm, text: hmacHex},
	"to_base64":   {text: toBase64},
	"to_base16":   {text: toBase16},

	"alias_card":            {params: []argKind{boolArg, boolArg, boolArg}, random: aliasCard},
	"alias_preserve_format": {params: []argKind{intArg, intArg}, valid: each(optCount(0), optCount(1)), random: aliasPreserveFormat},
	"alias_preserve_length": {params: []argKind{intArg, intArg}, valid: each(optCount(0), optCount(1)), random: aliasPreserveLength},
}

// check reports, at the filter's name, arguments of the wrong number or
// kind or with values the filter refuses.
func (s *filterSpec) check(f filter) error {
	if n := len(f.args); n < s.required || n > len(s.params) {
		switch {
		case len(s.params) == 0:
			return errorAt(f.pos, "%s takes no arguments", f.name)
		case s.required == len(s.params):
			return errorAt(f.pos, "%s takes %d argument(s), got %d", f.name, s.required, n)
		default:
			return errorAt(f.pos, "%s takes %d to %d arguments, got %d", f.name, s.required, len(s.params), n)
		}
	}
	for i, a := range f.args {
		if a.kind != s.params[i] {
			return errorAt(f.pos, "argument %d of %s must be %s", i+1, f.name, s.params[i])
		}
	}
	if s.valid != nil {
		if err := s.valid(f.args); err != nil {
			return errorAt(f.pos, "%s: %s", f.name, err)
		}
	}
	return nil
}

// each combines argument checks.
func each(checks ...func([]arg) error) func([]arg) error {
	return func(a []arg) error {
		for _, c := range checks {
			if err := c(a); err != nil {
				return err
			}
		}
		return nil
	}
}

// count checks that argument i, a number of characters, is not negative.
func count(i int) func([]arg) error {
	return func(a []arg) error {
		if a[i].n < 0 {
			return fmt.Errorf("argument %d must not be negative", i+1)
		}
		return nil
	}
}

// optCount is count for an optional argument.
func optCount(i int) func([]arg) error {
	return func(a []arg) error {
		if len(a) > i {
			return count(i)(a)
		}
		return nil
	}
}

// width checks that argument i, a width to pad to, is within 0..maxWidth.
func width(i int) func([]arg) error {
	return func(a []arg) error {
		if a[i].n < 0 || a[i].n > maxWidth {
			return fmt.Errorf("argument %d must be within 0 to %d", i+1, maxWidth)
		}
		return nil
	}
}

// oneChar checks that the optional argument i is exactly one character.
func oneChar(i int) func([]arg) error {
	return func(a []arg) error {
		if len(a) > i && utf8.RuneCountInString(a[i].s) != 1 {
			return errors.New("the character argument must be exactly one character")
		}
		return nil
	}
}

// optString returns the optional string argument i, or def.
func optString(a []arg, i int, def string) string {
	if len(a) > i {
		return a[i].s
	}
	return def
}
