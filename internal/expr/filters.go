package expr

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"unicode/utf8"
)

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

type argKind uint8

const (
	intArg argKind = iota
	strArg
)

// filterSpec declares a filter: its arguments (the first min required),
// an extra parse-time check, and the function.
type filterSpec struct {
	args  []argKind
	min   int
	check func(args []arg) error
	fn    func(v any, args []arg) (any, error)
}

func (s filterSpec) checkArgs(f filter) error {
	if len(f.args) < s.min || len(f.args) > len(s.args) {
		if s.min == len(s.args) {
			return errorAt(f.pos, "%s takes %d argument(s)", f.name, s.min)
		}
		return errorAt(f.pos, "%s takes %d to %d arguments", f.name, s.min, len(s.args))
	}
	for i, a := range f.args {
		if a.isInt != (s.args[i] == intArg) {
			kind := "a number"
			if s.args[i] == strArg {
				kind = "a quoted string"
			}
			return errorAt(f.pos, "argument %d of %s must be %s", i+1, f.name, kind)
		}
	}
	if s.check != nil {
		if err := s.check(f.args); err != nil {
			return errorAt(f.pos, "%s: %s", f.name, err.Error())
		}
	}
	return nil
}

// filters is the filter table; the package documentation lists it.
var filters map[string]filterSpec

func init() {
	filters = map[string]filterSpec{
		"last4":       {fn: func(v any, _ []arg) (any, error) { return lastN(str(v), 4), nil }},
		"reveal_last": {args: []argKind{intArg, strArg}, min: 1, check: checkMask(1), fn: revealLast},
		"reveal":      {args: []argKind{intArg, intArg, strArg}, min: 2, check: checkMask(2), fn: reveal},
		"slice":       {args: []argKind{intArg, intArg}, min: 1, check: checkWidths, fn: slice},
		"pad_left":    {args: []argKind{intArg, strArg}, min: 1, check: checkPad, fn: pad(true)},
		"pad_right":   {args: []argKind{intArg, strArg}, min: 1, check: checkPad, fn: pad(false)},
		"stringify":   {fn: func(v any, _ []arg) (any, error) { return Stringify(v), nil }},
		"to_string":   {fn: func(v any, _ []arg) (any, error) { return Stringify(v), nil }},
		"json":        {args: []argKind{strArg}, min: 1, check: checkPath, fn: jsonPath},
		"upcase":      {fn: func(v any, _ []arg) (any, error) { return strings.ToUpper(str(v)), nil }},
		"downcase":    {fn: func(v any, _ []arg) (any, error) { return strings.ToLower(str(v)), nil }},
		"replace": {args: []argKind{strArg, strArg}, min: 2, fn: func(v any, a []arg) (any, error) {
			return replaceAll(str(v), a[0].s, a[1].s)
		}},
		"remove": {args: []argKind{strArg}, min: 1, fn: func(v any, a []arg) (any, error) {
			return replaceAll(str(v), a[0].s, "")
		}},
		"split":      {args: []argKind{strArg}, min: 1, fn: split},
		"card_bin":   {fn: cardBIN},
		"card_mask":  {fn: cardMask},
		"card_exp":   {args: []argKind{strArg}, min: 0, fn: cardExp},
		"to_number":  {fn: toNumber},
		"to_boolean": {fn: toBoolean},
		"hmac":       {args: []argKind{strArg, strArg}, min: 2, check: checkHMAC, fn: hmacFilter},
		"to_base64": {fn: func(v any, _ []arg) (any, error) {
			return base64.StdEncoding.EncodeToString([]byte(Stringify(v))), nil
		}},
		"to_base16": {fn: func(v any, _ []arg) (any, error) {
			return hex.EncodeToString([]byte(Stringify(v))), nil
		}},
	}
}

// str is the text a string filter works on: nil is "", others stringified.
func str(v any) string { return Stringify(v) }

func lastN(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[len(r)-n:])
}

// checkMask checks that the optional mask character at index i is one
// character, and the counts are within bounds.
func checkMask(i int) func([]arg) error {
	return func(a []arg) error {
		if err := checkWidths(a); err != nil {
			return err
		}
		if len(a) > i && utf8.RuneCountInString(a[i].s) != 1 {
			return errors.New("the mask character must be one character")
		}
		return nil
	}
}

// checkWidths bounds every integer argument.
func checkWidths(a []arg) error {
	for _, x := range a {
		if x.isInt && (x.n > maxWidth || x.n < -maxWidth) {
			return fmt.Errorf("numbers must be within ±%d", maxWidth)
		}
	}
	return nil
}

func maskChar(a []arg, i int) rune {
	if len(a) > i {
		r, _ := utf8.DecodeRuneInString(a[i].s)
		return r
	}
	return 'X'
}

func revealLast(v any, a []arg) (any, error) {
	r := []rune(str(v))
	n := max(a[0].n, 0)
	for i := 0; i < len(r)-n; i++ {
		r[i] = maskChar(a, 1)
	}
	return string(r), nil
}

func reveal(v any, a []arg) (any, error) {
	r := []rune(str(v))
	first, last := max(a[0].n, 0), max(a[1].n, 0)
	if first+last >= len(r) {
		return string(r), nil
	}
	for i := first; i < len(r)-last; i++ {
		r[i] = maskChar(a, 2)
	}
	return string(r), nil
}

// slice is Liquid's slice: start (negative from the end) and length
// (default 1), on the characters of a string or the elements of an array.
func slice(v any, a []arg) (any, error) {
	length := 1
	if len(a) > 1 {
		length = a[1].n
	}
	bounds := func(n int) (int, int) {
		start := a[0].n
		if start < 0 {
			start += n
		}
		if start < 0 || start >= n || length <= 0 {
			return 0, 0
		}
		return start, min(start+length, n)
	}
	if arr, ok := v.([]any); ok {
		s, e := bounds(len(arr))
		return append([]any{}, arr[s:e]...), nil
	}
	r := []rune(str(v))
	s, e := bounds(len(r))
	return string(r[s:e]), nil
}

func checkPad(a []arg) error {
	if err := checkWidths(a); err != nil {
		return err
	}
	if len(a) > 1 && utf8.RuneCountInString(a[1].s) != 1 {
		return errors.New("the padding must be one character")
	}
	return nil
}

func pad(left bool) func(any, []arg) (any, error) {
	return func(v any, a []arg) (any, error) {
		s := str(v)
		c := " "
		if len(a) > 1 {
			c = a[1].s
		}
		n := a[0].n - utf8.RuneCountInString(s)
		if n <= 0 {
			return s, nil
		}
		if left {
			return strings.Repeat(c, n) + s, nil
		}
		return s + strings.Repeat(c, n), nil
	}
}

// replaceAll bounds its output so that no input can blow it up.
func replaceAll(s, from, to string) (any, error) {
	if from == "" {
		return s, nil
	}
	if n := strings.Count(s, from); len(s)+n*(len(to)-len(from)) > maxTemplateBytes*16 {
		return nil, errors.New("result too long")
	}
	return strings.ReplaceAll(s, from, to), nil
}

func split(v any, a []arg) (any, error) {
	s := str(v)
	if a[0].s == "" && utf8.RuneCountInString(s) > maxTemplateBytes {
		return nil, errors.New("input too long")
	}
	out := []any{}
	for _, p := range strings.Split(s, a[0].s) {
		out = append(out, p)
	}
	return out, nil
}

// cardDigits returns the digits of a card number string.
func cardDigits(v any) (string, error) {
	s := str(v)
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return "", errors.New("input is not a card number")
		}
	}
	return s, nil
}

func cardBIN(v any, _ []arg) (any, error) {
	d, err := cardDigits(v)
	if err != nil || len(d) < 6 {
		return nil, errors.New("input is not a card number")
	}
	return d[:6], nil
}

func cardMask(v any, _ []arg) (any, error) {
	d, err := cardDigits(v)
	if err != nil || len(d) < 13 {
		return nil, errors.New("input is not a card number")
	}
	return d[:6] + strings.Repeat("X", len(d)-10) + d[len(d)-4:], nil
}

// cardExp formats a card's expiry; the format (default "MM/YY") may use
// MM, YYYY and YY.
func cardExp(v any, a []arg) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("input is not a card")
	}
	month, err1 := wholeNumber(m["expiration_month"])
	year, err2 := wholeNumber(m["expiration_year"])
	if err1 != nil || err2 != nil || month < 1 || month > 12 || year < 0 || year > 9999 {
		return nil, errors.New("input is not a card with an expiration")
	}
	format := "MM/YY"
	if len(a) > 0 {
		format = a[0].s
	}
	r := strings.NewReplacer("MM", fmt.Sprintf("%02d", month), "YYYY", fmt.Sprintf("%04d", year), "YY", fmt.Sprintf("%02d", year%100))
	return r.Replace(format), nil
}

func wholeNumber(v any) (int, error) {
	switch x := v.(type) {
	case json.Number:
		return strconv.Atoi(string(x))
	case float64:
		if x != float64(int(x)) {
			return 0, errors.New("not whole")
		}
		return int(x), nil
	case string:
		return strconv.Atoi(x)
	}
	return 0, errors.New("not a number")
}

func toNumber(v any, _ []arg) (any, error) {
	switch x := v.(type) {
	case json.Number:
		return x, nil
	case float64:
		return json.Number(strconv.FormatFloat(x, 'f', -1, 64)), nil
	}
	s := strings.TrimSpace(str(v))
	var n json.Number
	if err := json.Unmarshal([]byte(s), &n); err != nil || s == "" || s[0] == '"' {
		return nil, errors.New("input is not a number")
	}
	return n, nil
}

func toBoolean(v any, _ []arg) (any, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		if b, err := strconv.ParseBool(x); err == nil && (x == "true" || x == "false") {
			return b, nil
		}
	}
	return nil, errors.New("input is not true or false")
}

func checkHMAC(a []arg) error {
	if a[0].s != "sha256" && a[0].s != "sha512" {
		return errors.New("algorithm must be 'sha256' or 'sha512'")
	}
	return nil
}

func hmacFilter(v any, a []arg) (any, error) {
	h := sha256.New
	if a[0].s == "sha512" {
		h = sha512.New
	}
	m := hmac.New(func() hash.Hash { return h() }, []byte(a[1].s))
	m.Write([]byte(str(v)))
	return hex.EncodeToString(m.Sum(nil)), nil
}
