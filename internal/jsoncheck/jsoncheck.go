// Package jsoncheck finds the strings of a JSON text that encoding/json
// would decode with a loss: invalid UTF-8 and lone UTF-16 surrogate
// escapes ("\ud800" not followed by a low surrogate, or a lone "\udc00").
// encoding/json replaces both with U+FFFD without a word, so a value read
// back is not the value sent; [Check] walks the raw text once, before it is
// decoded, and names the first such string by its path.
//
// Check judges only strings. Text that is not JSON for another reason
// (a missing comma, a control character in a string, a bad \u escape) is
// left to the decoder, which reports it; the walk still ends.
package jsoncheck

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error locates a string that cannot be decoded without loss.
type Error struct {
	// Path is the JSON path of the offending value, in the form field
	// errors use: "data.name", "[2].data", "cards[0].number"; "" is the
	// whole document.
	Path string
	// Key reports that the offending string is a key of the object at
	// Path, rather than the value at Path.
	Key bool
	// Offset is the byte offset of the offending byte or escape in the
	// text.
	Offset int
	// Reason says what is wrong, without quoting the text.
	Reason string
}

func (e *Error) Error() string {
	what := "the value"
	if e.Key {
		what = "a key"
	}
	at := e.Path
	if at == "" {
		at = "the document"
	}
	return "jsoncheck: " + what + " at " + at + " " + e.Reason + " (byte " + strconv.Itoa(e.Offset) + ")"
}

// Reasons an Error gives.
const (
	ReasonUTF8      = "is not valid UTF-8"
	ReasonSurrogate = "holds a lone UTF-16 surrogate escape"
)

// frame is one open array or object.
type frame struct {
	object bool
	// index is the position in an array.
	index int
	// keyStart and keyEnd delimit the current key of an object, quotes
	// included; keyEnd is 0 while no key has been read.
	keyStart, keyEnd int
	// wantKey is set in an object where the next string is a key.
	wantKey bool
}

// Check returns the first string of text that is not valid UTF-8 or holds
// a lone surrogate escape, or nil. It runs in time linear in len(text) and
// does not recurse.
func Check[T string | []byte](text T) *Error {
	var stack []frame
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '{':
			stack = append(stack, frame{object: true, wantKey: true})
		case '[':
			stack = append(stack, frame{})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].object {
					stack[n-1].wantKey = true
				} else {
					stack[n-1].index++
				}
			}
		case ':':
			if n := len(stack); n > 0 {
				stack[n-1].wantKey = false
			}
		case '"':
			end, bad, reason := scanString(text, i)
			isKey := len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey
			if reason != "" {
				return &Error{Path: path(text, stack, isKey), Key: isKey, Offset: bad, Reason: reason}
			}
			if isKey {
				stack[len(stack)-1].keyStart, stack[len(stack)-1].keyEnd = i, end+1
			}
			i = end
		}
	}
	return nil
}

// scanString reads the string whose opening quote is at text[start]. It
// returns the index of the closing quote (len(text) when there is none)
// and, for a string that would be decoded with a loss, the offset of the
// first offending byte and the reason.
func scanString[T string | []byte](text T, start int) (end, bad int, reason string) {
	for i := start + 1; i < len(text); {
		c := text[i]
		switch {
		case c == '"':
			return i, 0, ""
		case c == '\\':
			if i+1 < len(text) && text[i+1] == 'u' {
				r, ok := hex4(text, i+2)
				if !ok {
					i += 2 // a syntax error: the decoder's to report
					continue
				}
				switch {
				case r >= 0xD800 && r < 0xDC00:
					if i+7 < len(text) && text[i+6] == '\\' && text[i+7] == 'u' {
						if lo, ok := hex4(text, i+8); ok && lo >= 0xDC00 && lo < 0xE000 {
							i += 12
							continue
						}
					}
					return len(text), i, ReasonSurrogate
				case r >= 0xDC00 && r < 0xE000:
					return len(text), i, ReasonSurrogate
				}
				i += 6
				continue
			}
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			var r rune
			var size int
			if s, ok := any(text).(string); ok {
				r, size = utf8.DecodeRuneInString(s[i:])
			} else {
				r, size = utf8.DecodeRune([]byte(text[i:min(i+utf8.UTFMax, len(text))]))
			}
			if r == utf8.RuneError && size == 1 {
				return len(text), i, ReasonUTF8
			}
			i += size
		}
	}
	return len(text), 0, ""
}

// hex4 decodes the four hex digits at text[i:i+4].
func hex4[T string | []byte](text T, i int) (rune, bool) {
	if i+4 > len(text) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(text[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// path renders the path of the value being read; for a key, the path of
// its object.
func path[T string | []byte](text T, stack []frame, key bool) string {
	if key {
		stack = stack[:len(stack)-1]
	}
	var b []byte
	for _, f := range stack {
		if !f.object {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(f.index), 10)
			b = append(b, ']')
			continue
		}
		if f.keyEnd == 0 {
			continue
		}
		var name string
		if err := json.Unmarshal([]byte(text[f.keyStart:f.keyEnd]), &name); err != nil {
			name = "?"
		}
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, name...)
	}
	return string(b)
}

// Message is what a field error says about e: what is wrong and what to
// send instead, without quoting the text.
func (e *Error) Message() string {
	subject := "is"
	if e.Key {
		subject = "has a key that is"
	}
	switch e.Reason {
	case ReasonSurrogate:
		if e.Key {
			subject = "has a key that"
		} else {
			subject = ""
		}
		return strings.TrimSpace(subject+" holds a lone UTF-16 surrogate escape (a \\ud800-\\udbff not followed by \\udc00-\\udfff, or a lone \\udc00-\\udfff)") +
			"; it would not be stored as sent"
	}
	return subject + " not valid UTF-8; it would not be stored as sent"
}

// Join prefixes path with the path of the value the text was found in:
// Join("args", "a.b") is "args.a.b", Join("args", "[0]") is "args[0]".
func Join(prefix, path string) string {
	switch {
	case prefix == "":
		return path
	case path == "":
		return prefix
	case path[0] == '[':
		return prefix + path
	}
	return prefix + "." + path
}
