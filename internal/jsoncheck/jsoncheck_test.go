package jsoncheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		text   string
		path   string // "-" for no error
		key    bool
		reason string
		offset int
	}{
		{text: `{}`, path: "-"},
		{text: `"plain"`, path: "-"},
		{text: `{"a": "é", "b": "\u00e9", "c": "\ud83d\ude00", "d": "😀", "e": "\ufffd", "f": "` + "\uFFFD" + `"}`, path: "-"},
		{text: `{"a": "\\ud800"}`, path: "-"}, // an escaped backslash, then text
		{text: `"\ud800"`, path: "", reason: ReasonSurrogate, offset: 1},
		{text: `{"data": "\ud800"}`, path: "data", reason: ReasonSurrogate, offset: 10},
		{text: `{"data": {"name": "ab\uD800x"}}`, path: "data.name", reason: ReasonSurrogate, offset: 21},
		{text: `{"data": "\ud800\u0041"}`, path: "data", reason: ReasonSurrogate},
		{text: `{"data": "\ud800\ud800"}`, path: "data", reason: ReasonSurrogate},
		{text: `{"data": "\udc00"}`, path: "data", reason: ReasonSurrogate},
		{text: `{"data": "x\ud800`, path: "data", reason: ReasonSurrogate},
		{text: `["a", 1, {"data": "\udfff"}]`, path: "[2].data", reason: ReasonSurrogate},
		{text: `{"cards": [{"n": 1}, {"number": "4242", "cvc": "` + "\xff" + `"}]}`, path: "cards[1].cvc", reason: ReasonUTF8},
		{text: `{"a": {"b": 1}, "c": ["x", ["y", "` + "\xc3" + `"]]}`, path: "c[1][1]", reason: ReasonUTF8},
		{text: `{"data": {"` + "\xff" + `": 1}}`, path: "data", key: true, reason: ReasonUTF8},
		{text: `{"\ud800": 1}`, path: "", key: true, reason: ReasonSurrogate},
		{text: `{"a\"b": {"c": "\udc00"}}`, path: `a"b.c`, reason: ReasonSurrogate},
		{text: `{"a": 1, "b": "` + "\xed\xa0\x80" + `"}`, path: "b", reason: ReasonUTF8}, // a surrogate in UTF-8
		{text: `{"a": "\u12"}`, path: "-"},                                               // a syntax error: not ours
		{text: `[[[[`, path: "-"},
		{text: `]]]}}"`, path: "-"},
	} {
		err := Check(tc.text)
		if tc.path == "-" {
			if err != nil {
				t.Errorf("Check(%q) = %v, want nil", tc.text, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Check(%q) = nil, want an error at %q", tc.text, tc.path)
			continue
		}
		if err.Path != tc.path || err.Key != tc.key || err.Reason != tc.reason || (tc.offset != 0 && err.Offset != tc.offset) {
			t.Errorf("Check(%q) = %+v, want path %q key %v reason %q offset %d", tc.text, *err, tc.path, tc.key, tc.reason, tc.offset)
		}
		if b := Check([]byte(tc.text)); b == nil || *b != *err {
			t.Errorf("Check([]byte(%q)) = %v, want %v", tc.text, b, err)
		}
	}
}

// decodedReplacements counts the U+FFFD runes in the strings (keys too)
// encoding/json decodes from text, or -1 when text is not JSON.
func decodedReplacements(text []byte) int {
	dec := json.NewDecoder(bytes.NewReader(text))
	n := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			return -1
		}
		if s, ok := tok.(string); ok {
			n += strings.Count(s, "\uFFFD")
		}
	}
}

// sentReplacements counts the U+FFFD the text itself holds, raw or as
// \ufffd escapes.
func sentReplacements(text []byte) int {
	n := 0
	for i := 0; i < len(text); i++ {
		switch {
		case text[i] == '\\' && i+5 < len(text) && text[i+1] == 'u' && strings.EqualFold(string(text[i+2:i+6]), "fffd"):
			n++
			i += 5
		case text[i] == '\\':
			i++
		case bytes.HasPrefix(text[i:], []byte("\uFFFD")):
			n++
			i += 2
		}
	}
	return n
}

// FuzzCheck holds Check to encoding/json: for a JSON text, Check reports
// nothing exactly when decoding adds no U+FFFD of its own; for any text it
// ends without panicking, and reports a path only for an offset inside it.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"data": "\ud800"}`, `["a", {"b": "\udc00x"}]`, `{"` + "\xff" + `": 1}`, `"\ud83d\ude00"`,
		`{"a": "\ufffd", "b": "` + "\uFFFD" + `"}`, `{"a": [1, 2, {"c": "\\ud800"}]}`, `"\ud800\ud800\udc00"`,
		`{"x": "` + "\xe2\x82" + `"}`, `[1, "2", true, null, {"k": [{}]}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		err := Check(text)
		if err != nil && (err.Offset < 0 || err.Offset >= len(text)) {
			t.Fatalf("Check(%q) offset %d outside the text", text, err.Offset)
		}
		if !json.Valid(text) {
			return
		}
		decoded, sent := decodedReplacements(text), sentReplacements(text)
		if decoded < 0 {
			return
		}
		if lossy := decoded > sent; lossy != (err != nil) {
			t.Fatalf("Check(%q) = %v, but decoding adds %d U+FFFD", text, err, decoded-sent)
		}
		if err != nil && err.Reason == ReasonUTF8 && utf8.Valid(text) {
			t.Fatalf("Check(%q) = %v for valid UTF-8", text, err)
		}
	})
}
