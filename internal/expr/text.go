package expr

import (
	"errors"
	"strings"
	"unicode/utf8"
)

func upcase(s string, _ []arg) (any, error)   { return strings.ToUpper(s), nil }
func downcase(s string, _ []arg) (any, error) { return strings.ToLower(s), nil }

func replace(s string, a []arg) (any, error) { return replaceAll(s, a[0].s, a[1].s) }
func remove(s string, a []arg) (any, error)  { return replaceAll(s, a[0].s, "") }

// replaceAll replaces every occurrence of from. An empty from replaces
// nothing: Go's ReplaceAll would insert between every character, which no
// one writing a mask means. The result size is worked out first, since one
// short input can ask for a huge result (replace 'a' with 60 KiB of text).
func replaceAll(s, from, to string) (any, error) {
	if from == "" {
		return s, nil
	}
	n := strings.Count(s, from)
	if n > 0 && len(to) > len(from) && (len(to)-len(from)) > (maxWork-len(s))/n {
		return nil, errors.New("replace result is too long")
	}
	return strings.ReplaceAll(s, from, to), nil
}

// split splits on every occurrence of sep (an empty sep splits into
// characters) into an array of strings. As in Liquid, "" splits into an
// empty array, not an array of one empty string.
func split(s string, a []arg) (any, error) {
	if s == "" {
		return []any{}, nil
	}
	n := utf8.RuneCountInString(s)
	if a[0].s != "" {
		n = strings.Count(s, a[0].s) + 1
	}
	if n > maxParts {
		return nil, errors.New("split gives too many parts")
	}
	parts := strings.Split(s, a[0].s)
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}
