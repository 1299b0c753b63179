package jsoncheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
		// Keys given twice: encoding/json keeps the last value.
		{text: `{"a": 1, "a": 2}`, path: "a", reason: ReasonDuplicate, offset: 9},
		{text: `{"data": {"n": "1", "m": [], "n": "2"}}`, path: "data.n", reason: ReasonDuplicate, offset: 29},
		{text: `{"a": 1, "\u0061": 2}`, path: "a", reason: ReasonDuplicate},
		{text: `{"\u00e9": 1, "é": 2}`, path: "é", reason: ReasonDuplicate},
		{text: `[{"a": 1}, {"b": 1, "a": {"a": 1}}, {"x": {"a": 1, "b": 2, "a": 3}}]`, path: "[2].x.a", reason: ReasonDuplicate},
		{text: `{"a": {"a": 1}, "b": {"a": 2}, "c": [{"a": 1}, {"a": 1}]}`, path: "-"},
		{text: `{"a": 1, "A": 2, "a ": 3, "\u0041": 4}`, path: "A", reason: ReasonDuplicate},
		{text: `{"\\": 1, "\"": 2, "\\\"": 3}`, path: "-"},
		{text: `{"k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k16": 16, "k17": 17, "k18": 18, "k19": 19, "k3": 0}`, path: "k3", reason: ReasonDuplicate},
		{text: `{"k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k16": 16, "k17": 17, "k18": 18, "k19": 19, "k\u0031\u0039": 0}`, path: "k19", reason: ReasonDuplicate},
		{text: `{"k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k16": 16, "k17": 17, "k18": 18, "k19": 19, "k20": 0}`, path: "-"},
		{text: `{"a": 1, "a`, path: "-"}, // cut short: the decoder's to report
		// Large objects one after the other, and inside another, each
		// with its own keys.
		{text: `[{"k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k16": 16, "k17": 17, "k18": 18, "k19": 19}, {"k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k16": 16, "k17": 17, "k18": 18, "k19": 19}]`, path: "-"},
		{text: `{"a": {"k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k16": 16, "k17": 17, "k18": 18, "k19": 19}, "b": {"k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k16": 16, "k17": 17, "k18": 18, "k19": 19, "k7": 1}}`, path: "b.k7", reason: ReasonDuplicate},
		{text: `{"k1": {"k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k16": 16, "k17": 17, "k18": 18, "k19": 19}, "k2": 2, "k1": 3}`, path: "k1", reason: ReasonDuplicate},
		{text: `[[[[`, path: "-"},
		{text: `]]]}}"`, path: "-"},
	} {
		err := Check(tc.text)
		// Strings is Check but for duplicate keys.
		if str := Strings(tc.text); tc.reason == ReasonDuplicate && str != nil {
			t.Errorf("Strings(%q) = %v, want nil", tc.text, str)
		} else if tc.reason != ReasonDuplicate && (str == nil) != (err == nil) {
			t.Errorf("Strings(%q) = %v, Check = %v", tc.text, str, err)
		}
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

// duplicateKey reports whether an object of text, which must be JSON, has
// a key twice once decoded.
func duplicateKey(text []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(text))
	type open struct {
		keys    map[string]bool
		wantKey bool
	}
	var stack []*open
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *open
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok {
		case json.Delim('{'):
			if top != nil {
				top.wantKey = true
			}
			stack = append(stack, &open{keys: map[string]bool{}, wantKey: true})
			continue
		case json.Delim('['):
			if top != nil {
				top.wantKey = true
			}
			stack = append(stack, &open{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			continue
		}
		if top == nil || top.keys == nil {
			continue
		}
		if top.wantKey {
			k := tok.(string)
			if top.keys[k] {
				return true
			}
			top.keys[k] = true
		}
		top.wantKey = !top.wantKey
	}
}

// FuzzCheck holds Check to encoding/json: for a JSON text, Check reports
// nothing exactly when decoding adds no U+FFFD of its own and no object
// has a key twice; for any text it ends without panicking, and reports a
// path only for an offset inside it.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"data": "\ud800"}`, `["a", {"b": "\udc00x"}]`, `{"` + "\xff" + `": 1}`, `"\ud83d\ude00"`,
		`{"a": "\ufffd", "b": "` + "\uFFFD" + `"}`, `{"a": [1, 2, {"c": "\\ud800"}]}`, `"\ud800\ud800\udc00"`,
		`{"x": "` + "\xe2\x82" + `"}`, `[1, "2", true, null, {"k": [{}]}]`,
		`{"a": 1, "\u0061": {"a": [1]}}`, `{"b": {}, "c": {"b": 1}, "b": 2}`,
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":{"x":1},"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k1\u0038":18,"k3":0}`,
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
		if lossy := decoded > sent || duplicateKey(text); lossy != (err != nil) {
			t.Fatalf("Check(%q) = %v, but decoding adds %d U+FFFD (duplicate key: %v)", text, err, decoded-sent, duplicateKey(text))
		}
		if err != nil && err.Reason == ReasonUTF8 && utf8.Valid(text) {
			t.Fatalf("Check(%q) = %v for valid UTF-8", text, err)
		}
	})
}

// BenchmarkCheck: a card request, as POST /tokenize takes it, and a batch
// of 1,000 plain values.
func BenchmarkCheck(b *testing.B) {
	card := []byte(`{"type":"card","data":{"number":"4242424242424242","expiration_month":12,"expiration_year":2030,"cvc":"123"}}`)
	var batch bytes.Buffer
	batch.WriteByte('{')
	for i := range 1000 {
		if i > 0 {
			batch.WriteByte(',')
		}
		fmt.Fprintf(&batch, `"v%d":"run-value-%d"`, i, i)
	}
	batch.WriteByte('}')
	for _, bc := range []struct {
		name string
		text []byte
	}{{"card", card}, {"batch1000", batch.Bytes()}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := Check(bc.text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
