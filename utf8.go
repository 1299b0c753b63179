package tokenvault

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Go strings may hold any bytes, and encoding/json silently turns bytes
// that are not UTF-8 into U+FFFD, as its decoder does with escapes of lone
// surrogates: a value sealed that way is not the value the caller gave. So
// the strings of requests given in-process (TokenRequest, Tokenize bodies
// given as Go values or raw JSON, UpdateToken patches) are refused, Invalid
// with the path of the string, when they are not valid UTF-8.

// utf8Origin says where a JSON text comes from, which decides what betrays
// invalid UTF-8 in it.
type utf8Origin int

const (
	// fromGoValue: json.Marshal's output for a Go value, where every byte
	// that was not UTF-8 became the escape \ufffd (a valid U+FFFD is
	// written as is, never escaped).
	fromGoValue utf8Origin = iota
	// fromJSONText: JSON text as a caller gave it, where \ufffd is a
	// legitimate escape and bytes that are not UTF-8 are raw.
	fromJSONText
)

// checkUTF8 reports, as an Invalid error naming its path (rewriteJSON's
// form, under prefix), the first string of the JSON text b, key or value,
// that is not valid UTF-8: raw bytes that are not UTF-8, escapes of lone
// surrogates, and for fromGoValue the escape \ufffd. b must be valid JSON.
func checkUTF8(b []byte, origin utf8Origin, prefix string) *Error {
	s := utf8Scan{b: b, origin: origin}
	if s.value(prefix) {
		return nil
	}
	return invalidField(s.path, "%s", s.problem)
}

// checkRequestUTF8 checks every string of a token request given as a Go
// value: id, type, data, mask, containers, metadata keys and values,
// search_indexes, fingerprint_expression. A request that does not encode is
// left to prepareToken, which says so.
func checkRequestUTF8(req TokenRequest, path string) *Error {
	b, err := json.Marshal(req)
	if err != nil {
		return nil
	}
	return checkUTF8(b, fromGoValue, path)
}

// utf8Scan walks a valid JSON text, keeping the path of each value.
type utf8Scan struct {
	b      []byte
	i      int
	origin utf8Origin
	// path and problem describe the first bad string found.
	path, problem string
}

func (s *utf8Scan) peek() byte {
	for s.i < len(s.b) && strings.IndexByte(" \t\r\n", s.b[s.i]) >= 0 {
		s.i++
	}
	if s.i == len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// value scans the value at s.i; it returns false once a bad string is
// found.
func (s *utf8Scan) value(path string) bool {
	switch s.peek() {
	case '{':
		s.i++
		for {
			switch s.peek() {
			case 0:
				return true
			case '}':
				s.i++
				return true
			case ',':
				s.i++
				continue
			}
			key, ok := s.str()
			if !ok {
				s.path, s.problem = join(path, key), "the key is not valid UTF-8"
				return false
			}
			if s.peek() == ':' {
				s.i++
			}
			if !s.value(join(path, key)) {
				return false
			}
		}
	case '[':
		s.i++
		for n := 0; ; {
			switch s.peek() {
			case 0:
				return true
			case ']':
				s.i++
				return true
			case ',':
				s.i++
				continue
			}
			if !s.value(fmt.Sprintf("%s[%d]", path, n)) {
				return false
			}
			n++
		}
	case '"':
		if _, ok := s.str(); !ok {
			s.path, s.problem = path, "is not valid UTF-8"
			return false
		}
		return true
	default: // a number, true, false or null
		for s.i < len(s.b) && strings.IndexByte(",:]} \t\r\n", s.b[s.i]) < 0 {
			s.i++
		}
		return true
	}
}

// str scans the string at s.i, returning its text (with U+FFFD for what is
// not UTF-8, for naming keys) and whether it is valid.
func (s *utf8Scan) str() (string, bool) {
	s.i++ // the opening quote
	var text strings.Builder
	valid := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return text.String(), valid
		case c == '\\' && s.i+1 < len(s.b):
			if s.b[s.i+1] != 'u' {
				text.WriteByte(s.b[s.i+1]) // near enough for a path
				s.i += 2
				continue
			}
			r, ok := s.hex4(s.i + 2)
			s.i += 6
			switch {
			case !ok:
				valid = false
			case r == utf8.RuneError && s.origin == fromGoValue:
				valid = false
			case r >= 0xD800 && r < 0xDC00:
				lo, ok := rune(0), false
				if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					lo, ok = s.hex4(s.i + 2)
				}
				if !ok || lo < 0xDC00 || lo >= 0xE000 {
					valid = false
					break
				}
				s.i += 6
				r = (r-0xD800)<<10 | (lo - 0xDC00) + 0x10000
			case r >= 0xDC00 && r < 0xE000:
				valid = false
			}
			text.WriteRune(r)
		case c < utf8.RuneSelf:
			text.WriteByte(c)
			s.i++
		default:
			r, size := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && size == 1 {
				valid = false
			}
			text.WriteRune(r)
			s.i += size
		}
	}
	return text.String(), valid
}

// hex4 reads the four hex digits of a \u escape at i.
func (s *utf8Scan) hex4(i int) (rune, bool) {
	if i+4 > len(s.b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(s.b[i:i+4]), 16, 16)
	return rune(n), err == nil
}
