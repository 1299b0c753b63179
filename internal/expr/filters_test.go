package expr_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/expr"
)

// evalWith parses src and evaluates it with v bound to the variable "v".
func evalWith(t *testing.T, src string, v any) (any, error) {
	t.Helper()
	tmpl, err := expr.Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q) = %v", src, err)
	}
	return tmpl.Eval(expr.Vars(map[string]any{"v": v}))
}

func hmacHex(h func() hash.Hash, key, msg string) string {
	m := hmac.New(h, []byte(key))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

const pan = "4242424242424242"

func TestFilters(t *testing.T) {
	card := map[string]any{"number": pan, "expiration_month": json.Number("3"), "expiration_year": json.Number("2031")}
	tests := []struct {
		name string
		src  string
		in   any
		want any
	}{
		// last4
		{"last4", "{{ v | last4 }}", pan, "4242"},
		{"last4 short", "{{ v | last4 }}", "abc", "abc"},
		{"last4 empty", "{{ v | last4 }}", "", ""},
		{"last4 nil", "{{ v | last4 }}", nil, ""},
		{"last4 unicode", "{{ v | last4 }}", "ünïcødé", "cødé"},
		{"last4 number", "{{ v | last4 }}", json.Number("123456"), "3456"},
		{"last4 float", "{{ v | last4 }}", float64(1234567), "4567"},

		// reveal_last
		{"reveal_last", "{{ v | reveal_last: 4 }}", pan, "XXXXXXXXXXXX4242"},
		{"reveal_last char", "{{ v | reveal_last: 4, '*' }}", pan, "************4242"},
		{"reveal_last unicode char", "{{ v | reveal_last: 2, '•' }}", "12345", "•••45"},
		{"reveal_last unicode input", "{{ v | reveal_last: 1 }}", "ñañá", "XXXá"},
		{"reveal_last zero", "{{ v | reveal_last: 0 }}", "abc", "XXX"},
		{"reveal_last all", "{{ v | reveal_last: 3 }}", "abc", "abc"},
		{"reveal_last more", "{{ v | reveal_last: 10 }}", "abc", "abc"},
		{"reveal_last empty", "{{ v | reveal_last: 4 }}", "", ""},
		{"reveal_last nil", "{{ v | reveal_last: 4 }}", nil, ""},
		{"reveal_last number", "{{ v | reveal_last: 2 }}", json.Number("12345"), "XXX45"},

		// reveal
		{"reveal", "{{ v | reveal: 6, 4 }}", pan, "424242XXXXXX4242"},
		{"reveal char", "{{ v | reveal: 1, 1, '#' }}", "abcde", "a###e"},
		{"reveal first only", "{{ v | reveal: 2, 0 }}", "abcde", "abXXX"},
		{"reveal covers", "{{ v | reveal: 2, 2 }}", "abcd", "abcd"},
		{"reveal exceeds", "{{ v | reveal: 9, 9 }}", "abc", "abc"},
		{"reveal unicode", "{{ v | reveal: 1, 1 }}", "ñañá", "ñXXá"},
		{"reveal nil", "{{ v | reveal: 1, 1 }}", nil, ""},

		// slice
		{"slice default length", "{{ v | slice: 0 }}", "hello", "h"},
		{"slice", "{{ v | slice: 1, 3 }}", "hello", "ell"},
		{"slice negative", "{{ v | slice: -3, 2 }}", "hello", "ll"},
		{"slice negative to end", "{{ v | slice: -4, 4 }}", pan, "4242"},
		{"slice past end", "{{ v | slice: 3, 99 }}", "hello", "lo"},
		{"slice start out of range", "{{ v | slice: 99 }}", "hello", ""},
		{"slice start at len", "{{ v | slice: 5 }}", "hello", ""},
		{"slice negative out of range", "{{ v | slice: -9, 3 }}", "hello", ""},
		{"slice zero length", "{{ v | slice: 1, 0 }}", "hello", ""},
		{"slice negative length", "{{ v | slice: 1, -1 }}", "hello", ""},
		{"slice unicode", "{{ v | slice: 1, 2 }}", "ñañá", "añ"},
		{"slice empty", "{{ v | slice: 0 }}", "", ""},
		{"slice nil", "{{ v | slice: 0 }}", nil, ""},
		{"slice number", "{{ v | slice: 0, 2 }}", json.Number("2031"), "20"},
		{"slice array", "{{ v | slice: 1, 5 }}", []any{"a", "b", "c"}, []any{"b", "c"}},
		{"slice array negative", "{{ v | slice: -1 }}", []any{"a", "b", "c"}, []any{"c"}},
		{"slice array out of range", "{{ v | slice: 3 }}", []any{"a", "b", "c"}, []any{}},
		{"slice empty array", "{{ v | slice: 0 }}", []any{}, []any{}},

		// pad
		{"pad_left", "{{ v | pad_left: 3, '0' }}", "7", "007"},
		{"pad_left default", "{{ v | pad_left: 3 }}", "7", "  7"},
		{"pad_right", "{{ v | pad_right: 3 }}", "7", "7  "},
		{"pad_right char", "{{ v | pad_right: 4, '.' }}", "ab", "ab.."},
		{"pad long enough", "{{ v | pad_left: 2 }}", "long", "long"},
		{"pad unicode", "{{ v | pad_left: 4, '•' }}", "ñá", "••ñá"},
		{"pad zero", "{{ v | pad_left: 0 }}", "", ""},
		{"pad nil", "{{ v | pad_left: 2, '0' }}", nil, "00"},
		{"pad number", "{{ v | pad_left: 2, '0' }}", json.Number("3"), "03"},

		// stringify and to_string
		{"stringify string", "{{ v | stringify }}", "a\"b", "a\"b"},
		{"stringify nil", "{{ v | stringify }}", nil, ""},
		{"stringify object", "{{ v | stringify }}", map[string]any{"b": json.Number("1"), "a": []any{true, nil}}, `{"a":[true,null],"b":1}`},
		{"stringify array", "{{ v | stringify }}", []any{"x", 1.5}, `["x",1.5]`},
		{"stringify number", "{{ v | stringify }}", json.Number("12.50"), "12.50"},
		{"stringify float", "{{ v | stringify }}", 1e21, "1000000000000000000000"},
		{"stringify bool", "{{ v | stringify }}", false, "false"},
		{"to_string number", "{{ v | to_string }}", json.Number("2031"), "2031"},
		{"to_string nil", "{{ v | to_string }}", nil, ""},

		// json
		{"json root", "{{ v | json: '$' }}", map[string]any{"a": "b"}, map[string]any{"a": "b"}},
		{"json key", "{{ v | json: '$.number' }}", card, pan},
		{"json number stays json.Number", "{{ v | json: '$.expiration_year' }}", card, json.Number("2031")},
		{"json string input", "{{ v | json: '$.x.y[1]' }}", `{"x": {"y": [1, 2.50]}}`, json.Number("2.50")},
		{"json bracket keys", `{{ v | json: "$['a b']" | json: '$["c.d"]' }}`, map[string]any{"a b": map[string]any{"c.d": true}}, true},
		{"json array input", "{{ v | json: '$[1].k' }}", []any{nil, map[string]any{"k": "v"}}, "v"},
		{"json present null", "{{ v | json: '$.a' }}", `{"a": null}`, nil},
		{"json string of string", "{{ v | json: '$' }}", `"quoted"`, "quoted"},
		{"json unicode key", "{{ v | json: '$.ключ' }}", map[string]any{"ключ": "значение"}, "значение"},

		// case
		{"upcase", "{{ v | upcase }}", "Ada Lovelace", "ADA LOVELACE"},
		{"downcase", "{{ v | downcase }}", "ÄDA", "äda"},
		{"upcase nil", "{{ v | upcase }}", nil, ""},

		// replace, remove, split
		{"replace", "{{ v | replace: 'a', 'A' }}", "banana", "bAnAnA"},
		{"replace longer", "{{ v | replace: '-', '--' }}", "a-b-c", "a--b--c"},
		{"replace empty from", "{{ v | replace: '', 'x' }}", "ab", "ab"},
		{"replace absent", "{{ v | replace: 'z', 'x' }}", "ab", "ab"},
		{"replace nil", "{{ v | replace: 'a', 'b' }}", nil, ""},
		{"remove", "{{ v | remove: ' ' }}", "4242 4242", "42424242"},
		{"remove unicode", "{{ v | remove: 'ñ' }}", "ñañá", "aá"},
		{"split", "{{ v | split: ' ' }}", "Ada Lovelace", []any{"Ada", "Lovelace"}},
		{"split absent", "{{ v | split: ',' }}", "abc", []any{"abc"}},
		{"split chars", "{{ v | split: '' }}", "ñá", []any{"ñ", "á"}},
		{"split empty", "{{ v | split: ',' }}", "", []any{}},
		{"split nil", "{{ v | split: ',' }}", nil, []any{}},
		{"split edges", "{{ v | split: ',' }}", ",a,", []any{"", "a", ""}},

		// cards
		{"card_bin", "{{ v | card_bin }}", pan, "424242"},
		{"card_bin six", "{{ v | card_bin }}", "123456", "123456"},
		{"card_bin spaced", "{{ v | card_bin }}", "4242 4242 4242 4242", "424242"},
		{"card_bin number", "{{ v | card_bin }}", json.Number("4242424242424242"), "424242"},
		{"card_mask", "{{ v | card_mask }}", pan, "424242XXXXXX4242"},
		{"card_mask 13", "{{ v | card_mask }}", "4222222222222", "422222XXX2222"},
		{"card_mask 19", "{{ v | card_mask }}", "6011000990139424123", "601100XXXXXXXXX4123"},
		{"card_mask spaced", "{{ v | card_mask }}", "4242 4242 4242 4242", "4242 42XX XXXX 4242"},
		{"card_mask dashed", "{{ v | card_mask }}", "4242-4242-4242-4242", "4242-42XX-XXXX-4242"},
		{"card_exp", "{{ v | card_exp }}", card, "03/31"},
		{"card_exp format", "{{ v | card_exp: 'MM-YYYY' }}", card, "03-2031"},
		{"card_exp both years", "{{ v | card_exp: 'YYYY YY MM' }}", card, "2031 31 03"},
		{"card_exp strings", "{{ v | card_exp }}", map[string]any{"expiration_month": "12", "expiration_year": "2030"}, "12/30"},
		{"card_exp floats", "{{ v | card_exp }}", map[string]any{"expiration_month": 7.0, "expiration_year": 2029.0}, "07/29"},
		{"card_exp two-digit year", "{{ v | card_exp: 'MM/YYYY' }}", map[string]any{"expiration_month": "1", "expiration_year": "29"}, "01/2029"},
		{"card_exp no tokens", "{{ v | card_exp: 'never' }}", card, "never"},

		// conversions
		{"to_number string", "{{ v | to_number }}", "12.50", json.Number("12.50")},
		{"to_number negative exp", "{{ v | to_number }}", "-1e-3", json.Number("-1e-3")},
		{"to_number number", "{{ v | to_number }}", json.Number("7"), json.Number("7")},
		{"to_number float", "{{ v | to_number }}", 2.5, json.Number("2.5")},
		{"to_number after slice", "{{ v | slice: 0, 2 | to_number }}", "2031", json.Number("20")},
		{"to_boolean true", "{{ v | to_boolean }}", "true", true},
		{"to_boolean false", "{{ v | to_boolean }}", "false", false},
		{"to_boolean bool", "{{ v | to_boolean }}", true, true},

		// encodings
		{"hmac sha256", "{{ v | hmac: 'sha256', 'k' }}", "abc", hmacHex(sha256.New, "k", "abc")},
		{"hmac sha512", "{{ v | hmac: 'sha512', 'k' }}", "abc", hmacHex(sha512.New, "k", "abc")},
		{"hmac empty key", "{{ v | hmac: 'sha256', '' }}", "abc", hmacHex(sha256.New, "", "abc")},
		{"hmac nil", "{{ v | hmac: 'sha256', 'k' }}", nil, hmacHex(sha256.New, "k", "")},
		{"hmac object", "{{ v | hmac: 'sha256', 'k' }}", map[string]any{"a": "b"}, hmacHex(sha256.New, "k", `{"a":"b"}`)},
		{"hmac vector", "{{ v | hmac: 'sha256', 'key' }}", "The quick brown fox jumps over the lazy dog",
			"f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"},
		{"to_base64", "{{ v | to_base64 }}", "abcd", "YWJjZA=="},
		{"to_base64 unicode", "{{ v | to_base64 }}", "ñ", "w7E="},
		{"to_base64 nil", "{{ v | to_base64 }}", nil, ""},
		{"to_base16", "{{ v | to_base16 }}", "abc", "616263"},
		{"to_base16 number", "{{ v | to_base16 }}", json.Number("10"), "3130"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evalWith(t, tc.src, tc.in)
			if err != nil {
				t.Fatalf("Eval(%q) with v=%#v = %v", tc.src, tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Eval(%q) with v=%#v (-want +got):\n%s", tc.src, tc.in, diff)
			}
		})
	}
}

func TestFilterErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		in   any
		msg  string
	}{
		{"json missing key", "{{ v | json: '$.x' }}", map[string]any{}, "json path $.x selects nothing"},
		{"json nil", "{{ v | json: '$' }}", nil, "json path $ selects nothing"},
		{"json index on object", "{{ v | json: '$[0]' }}", map[string]any{"0": 1.0}, "selects nothing"},
		{"json key on array", "{{ v | json: '$.a' }}", []any{1.0}, "selects nothing"},
		{"json index out of range", "{{ v | json: '$[2]' }}", []any{1.0}, "selects nothing"},
		{"json into scalar", "{{ v | json: '$.a.b' }}", `{"a": 1}`, "selects nothing"},
		{"json not json", "{{ v | json: '$.a' }}", "not json", "does not hold JSON"},
		{"json trailing data", "{{ v | json: '$' }}", `{"a":1} {}`, "does not hold JSON"},
		{"json empty string", "{{ v | json: '$' }}", "", "does not hold JSON"},
		{"card_bin letters", "{{ v | card_bin }}", "Ada Lovelace", "card_bin"},
		{"card_bin short", "{{ v | card_bin }}", "12345", "at least 6 digits"},
		{"card_bin nil", "{{ v | card_bin }}", nil, "card_bin"},
		{"card_mask short", "{{ v | card_mask }}", "123456789012", "at least 13 digits"},
		{"card_mask letters", "{{ v | card_mask }}", "4242x42424242424", "card_mask"},
		{"card_exp not a card", "{{ v | card_exp }}", "03/31", "card object"},
		{"card_exp missing", "{{ v | card_exp }}", map[string]any{"expiration_month": "3"}, "expiration_year"},
		{"card_exp month 13", "{{ v | card_exp }}", map[string]any{"expiration_month": "13", "expiration_year": "2030"}, "expiration_month"},
		{"card_exp month 0", "{{ v | card_exp }}", map[string]any{"expiration_month": json.Number("0"), "expiration_year": "2030"}, "expiration_month"},
		{"card_exp fraction", "{{ v | card_exp }}", map[string]any{"expiration_month": 1.5, "expiration_year": "2030"}, "expiration_month"},
		{"card_exp bad year", "{{ v | card_exp }}", map[string]any{"expiration_month": "1", "expiration_year": "20x0"}, "expiration_year"},
		{"to_number word", "{{ v | to_number }}", "x", "not a JSON number"},
		{"to_number empty", "{{ v | to_number }}", "", "not a JSON number"},
		{"to_number nil", "{{ v | to_number }}", nil, "not a JSON number"},
		{"to_number spaces", "{{ v | to_number }}", " 1", "not a JSON number"},
		{"to_number plus", "{{ v | to_number }}", "+1", "not a JSON number"},
		{"to_number leading zero", "{{ v | to_number }}", "01", "not a JSON number"},
		{"to_number bool", "{{ v | to_number }}", true, "not a JSON number"},
		{"to_boolean word", "{{ v | to_boolean }}", "yes", "to_boolean"},
		{"to_boolean case", "{{ v | to_boolean }}", "True", "to_boolean"},
		{"to_boolean number", "{{ v | to_boolean }}", json.Number("1"), "to_boolean"},
		{"to_boolean nil", "{{ v | to_boolean }}", nil, "to_boolean"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evalWith(t, tc.src, tc.in)
			var xe *expr.Error
			if !errors.As(err, &xe) {
				t.Fatalf("Eval(%q) with v=%#v = %#v, %v, want *Error", tc.src, tc.in, got, err)
			}
			if xe.Pos != 0 || !strings.Contains(xe.Msg, tc.msg) {
				t.Errorf("Eval(%q) with v=%#v = %v, want position 0: ...%s...", tc.src, tc.in, xe, tc.msg)
			}
		})
	}
}

// TestErrorsHideData checks that no evaluation error quotes the value
// being evaluated, which may be a card number.
func TestErrorsHideData(t *testing.T) {
	secret := "4111111111111111 secret"
	for _, src := range []string{
		"{{ v | card_bin }}", "{{ v | card_mask }}", "{{ v | card_exp }}",
		"{{ v | to_number }}", "{{ v | to_boolean }}", "{{ v | json: '$.a' }}",
	} {
		_, err := evalWith(t, src, secret)
		if err == nil || strings.Contains(err.Error(), "4111") || strings.Contains(err.Error(), "secret") {
			t.Errorf("Eval(%q) = %v, want an error that does not quote the input", src, err)
		}
	}
}
