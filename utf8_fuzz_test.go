package tokenvault

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzCheckUTF8: for any Go string, as a value and as a key, checkUTF8 of
// its JSON encoding refuses it exactly when it is not valid UTF-8, and
// names one path; the text of a valid string, escaped every way encoding/json
// does, is never refused as raw JSON.
func FuzzCheckUTF8(f *testing.F) {
	for _, s := range []string{"", "plain", "\xff", "a\xc3", "\uFFFD", "\\ufffd", "\"\\\u2028", "😀", "\xed\xa0\x80", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := json.Marshal(map[string]any{"k": []any{1, s}, s: true})
		if err != nil {
			t.Skip()
		}
		err2 := checkUTF8(b, fromGoValue, "")
		if utf8.ValidString(s) != (err2 == nil) {
			t.Fatalf("checkUTF8(%q) = %v, valid %v", s, err2, utf8.ValidString(s))
		}
		if err2 != nil {
			if len(err2.Fields) != 1 {
				t.Fatalf("checkUTF8(%q) fields = %v, want one path", s, err2.Fields)
			}
			return
		}
		if err := checkUTF8(b, fromJSONText, "x"); err != nil {
			t.Fatalf("valid JSON text of %q refused: %v", s, err)
		}
	})
}

// FuzzCheckUTF8Text: on any JSON text checkUTF8 does not panic, and it
// accepts every text whose strings decode without replacement.
func FuzzCheckUTF8Text(f *testing.F) {
	for _, s := range []string{`{"a": "\ud800"}`, `["\ud83d\ude00", "\ufffd"]`, "{\"\xff\": 1}", `"\\u00e9"`, `{"a":[1,{"b":null}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			t.Skip()
		}
		err := checkUTF8(b, fromJSONText, "")
		if utf8.Valid(b) && !containsSurrogateEscape(b) && err != nil {
			t.Fatalf("checkUTF8(%q) = %v, want nil", b, err)
		}
	})
}

// containsSurrogateEscape reports whether b may hold a \uD800-\uDFFF
// escape (conservatively: any \ud or \uD).
func containsSurrogateEscape(b []byte) bool {
	for i := 0; i+3 < len(b); i++ {
		if b[i] == '\\' && b[i+1] == 'u' && (b[i+2] == 'd' || b[i+2] == 'D') {
			return true
		}
	}
	return false
}
