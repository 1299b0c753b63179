package expr

import (
	"strings"
	"unicode/utf8"
)

// The masking filters count characters (runes), not bytes, so a mask never
// splits a multi-byte character.

func last4(s string, _ []arg) (any, error) {
	n := utf8.RuneCountInString(s)
	if n <= 4 {
		return s, nil
	}
	r := []rune(s)
	return string(r[n-4:]), nil
}

func revealLast(s string, a []arg) (any, error) {
	return maskRunes(s, 0, a[0].n, optString(a, 1, "X")), nil
}

func reveal(s string, a []arg) (any, error) {
	return maskRunes(s, a[0].n, a[1].n, optString(a, 2, "X")), nil
}

// maskRunes replaces every character of s but the first keepFirst and the
// last keepLast with c. If they overlap, s is returned as it is.
func maskRunes(s string, keepFirst, keepLast int, c string) string {
	r := []rune(s)
	if keepFirst+keepLast >= len(r) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(r)*len(c))
	b.WriteString(string(r[:keepFirst]))
	for range len(r) - keepFirst - keepLast {
		b.WriteString(c)
	}
	b.WriteString(string(r[len(r)-keepLast:]))
	return b.String()
}

// sliceBounds returns, for slice's arguments a, the indexes [i, j) that
// slice takes of an input of n elements or characters (i == j: none).
// The flow analysis (sliceFlow) takes the same.
func sliceBounds(a []arg) func(n int) (int, int) {
	length := 1
	if len(a) > 1 {
		length = a[1].n
	}
	return func(n int) (int, int) {
		start := a[0].n
		if start < 0 {
			start += n
		}
		if start < 0 || start >= n || length <= 0 {
			return 0, 0
		}
		return start, min(start+length, n)
	}
}

// slice is Liquid's slice: from start (negative counts from the end) take
// length (default 1) elements of an array or characters of anything else.
// A range outside the input gives "" or an empty array, not an error.
func slice(v any, a []arg) (any, error) {
	bounds := sliceBounds(a)
	if arr, ok := v.([]any); ok {
		i, j := bounds(len(arr))
		return append([]any{}, arr[i:j]...), nil
	}
	s, err := render(v)
	if err != nil {
		return nil, err
	}
	r := []rune(s)
	i, j := bounds(len(r))
	return string(r[i:j]), nil
}

// pad pads to at least a[0].n characters with a[1] (default a space).
func pad(left bool) func(string, []arg) (any, error) {
	return func(s string, a []arg) (any, error) {
		n := a[0].n - utf8.RuneCountInString(s)
		if n <= 0 {
			return s, nil
		}
		fill := strings.Repeat(optString(a, 1, " "), n)
		if left {
			return fill + s, nil
		}
		return s + fill, nil
	}
}
