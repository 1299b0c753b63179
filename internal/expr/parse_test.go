package expr_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/expr"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		roots []string
		exprs bool
	}{
		{"empty", "", nil, false},
		{"text", "plain text", nil, false},
		{"single brace", "{ not } an {expression}", nil, false},
		{"stray closing", "}} stray }}", nil, false},
		{"root", "{{ data }}", []string{"data"}, true},
		{"no spaces", "{{data.number|last4}}", []string{"data.number"}, true},
		{"lots of space", "{{ \t\n data.number \n | \t last4 \r\n }}", []string{"data.number"}, true},
		{"token id", "{{ 0190a1b2-7c4e-7d11 | json: '$.number' }}", []string{"0190a1b2-7c4e-7d11"}, true},
		{"literal root skipped", "{{ 'lit' }} {{ \"lit\" | upcase }}", nil, true},
		{"roots in order", "a {{ x | last4 }} b {{ 'lit' }} {{y}}{{ x }}", []string{"x", "y", "x"}, true},
		{"quoted pipe in raw root", "{{ a'|'b | upcase }}", []string{"a'|'b"}, true},
		{"braces in literal", `{{ "}}{{" | upcase }}`, nil, true},
		{"pipe in literal text", "{{ a }}|{{ b }}", []string{"a", "b"}, true},
		{"args", "{{ a | reveal: 6, 4, '*' | pad_left: 20 , \"0\" }}", []string{"a"}, true},
		{"negative arg", "{{ a | slice: -4, 4 }}", []string{"a"}, true},
		{"colon and comma in args", "{{ a | replace: ':', ',' }}", []string{"a"}, true},
		{"arg without spaces", "{{ a|slice:1,2|last4 }}", []string{"a"}, true},
		{"triple braces", "{{{ a }}}", []string{"{ a"}, true},
		{"json paths", `{{ a | json: '$' | json: "$.a['b c'][0]" | json: '$["d"].e-f._g' }}`, []string{"a"}, true},
		{"hmac", "{{ a | hmac: 'sha512', '' }}", []string{"a"}, true},
		{"card_exp format", "{{ a | card_exp: 'MM/YYYY' }}", []string{"a"}, true},
		{"100 filters", "{{ a" + strings.Repeat(" | upcase", 100) + " }}", []string{"a"}, true},
		{"max pad", "{{ a | pad_left: 4096 }}", []string{"a"}, true},
		{"max int", "{{ a | slice: -1000000, 1000000 }}", []string{"a"}, true},
		{"64 KiB", strings.Repeat("x", 64<<10), nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := expr.Parse(tc.src)
			if err != nil {
				t.Fatalf("Parse(%q) = %v, want no error", tc.src, err)
			}
			if tmpl.Source() != tc.src {
				t.Errorf("Source() = %q, want %q", tmpl.Source(), tc.src)
			}
			if diff := cmp.Diff(tc.roots, tmpl.Roots()); diff != "" {
				t.Errorf("Parse(%q).Roots() (-want +got):\n%s", tc.src, diff)
			}
			if got := tmpl.HasExpressions(); got != tc.exprs {
				t.Errorf("Parse(%q).HasExpressions() = %v, want %v", tc.src, got, tc.exprs)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		pos  int
		msg  string
	}{
		{"unclosed", "{{ data", 0, `"{{" has no matching "}}"`},
		{"unclosed after text", "ab {{ data", 3, "no matching"},
		{"second unclosed", "{{ a }} {{ b }", 8, "no matching"},
		{"unclosed with quote", "{{ 'abc", 0, "no matching"},
		{"unterminated literal", "{{ 'unterminated }}", 3, "unterminated string literal"},
		{"unterminated in raw root", "{{ it's }}", 5, "unterminated string literal"},
		{"unterminated arg", `{{ a | replace: "x, 'y' }}`, 16, "unterminated"},
		{"empty", "{{}}", 2, "no root operand"},
		{"blank", "{{   }}", 5, "no root operand"},
		{"no root", "{{ | upcase }}", 3, "no root operand"},
		{"two literals", "{{ 'a' 'b' }}", 7, `unexpected '\''`},
		{"text after literal", "{{ 'a'b }}", 6, `unexpected 'b'`},
		{"unknown filter", "{{ data | nope }}", 10, `unknown filter "nope"`},
		{"unknown filter with dash", "{{ data | foo-bar: 1 }}", 10, `unknown filter "foo-bar"`},
		{"empty filter", "{{ data | }}", 10, "filter name is missing"},
		{"double pipe", "{{ data || upcase }}", 9, "filter name is missing"},
		{"trailing pipe", "{{ data | upcase | }}", 19, "filter name is missing"},
		{"quoted filter name", "{{ data | 'upcase' }}", 10, "filter name is missing"},
		{"missing colon", "{{ data | slice 1 }}", 16, `unexpected '1' after filter slice`},
		{"too few args", "{{ data | reveal_last }}", 10, "reveal_last takes 1 to 2 arguments, got 0"},
		{"too many args", "{{ data | slice: 1, 2, 3 }}", 10, "slice takes 1 to 2 arguments, got 3"},
		{"args to last4", "{{ data | last4: 1 }}", 10, "last4 takes no arguments"},
		{"args to upcase", "{{ data | upcase: 'x' }}", 10, "upcase takes no arguments"},
		{"replace one arg", "{{ data | replace: 'a' }}", 10, "replace takes 2 argument(s), got 1"},
		{"wrong kind int", "{{ data | reveal_last: 'x' }}", 10, "argument 1 of reveal_last must be an integer"},
		{"wrong kind string", "{{ data | split: 1 }}", 10, "argument 1 of split must be a quoted string"},
		{"mask char too long", "{{ data | reveal_last: 4, 'xy' }}", 10, "exactly one character"},
		{"mask char empty", "{{ data | reveal: 1, 2, '' }}", 10, "exactly one character"},
		{"pad char too long", "{{ data | pad_left: 4, 'ab' }}", 10, "exactly one character"},
		{"negative count", "{{ data | reveal_last: -1 }}", 10, "must not be negative"},
		{"negative reveal", "{{ data | reveal: 1, -2 }}", 10, "argument 2 must not be negative"},
		{"pad too wide", "{{ data | pad_left: 4097 }}", 10, "within 0 to 4096"},
		{"negative pad", "{{ data | pad_right: -1 }}", 10, "within 0 to 4096"},
		{"int out of range", "{{ data | slice: 1000001 }}", 17, "out of range"},
		{"huge int", "{{ data | slice: 99999999999999999999999 }}", 17, "out of range"},
		{"bad hmac", "{{ data | hmac: 'md5', 'k' }}", 10, "'sha256' or 'sha512'"},
		{"hmac int key", "{{ data | hmac: 'sha256', 1 }}", 10, "argument 2 of hmac must be a quoted string"},
		{"json no dollar", "{{ data | json: 'x' }}", 10, "starts with $"},
		{"json bad step", "{{ data | json: '$x' }}", 10, "json"},
		{"json empty key", "{{ data | json: '$..a' }}", 10, "json"},
		{"json unclosed bracket", "{{ data | json: '$[0' }}", 10, "json"},
		{"json negative index", "{{ data | json: '$[-1]' }}", 10, "json"},
		{"json bad quoted key", "{{ data | json: \"$['a]\" }}", 10, "json"},
		{"json wildcard", "{{ data | json: '$.*' }}", 10, "json"},
		{"colon no args", "{{ data | last4: }}", 17, "argument is missing"},
		{"trailing comma", "{{ data | slice: 1, }}", 20, "argument is missing"},
		{"leading comma", "{{ data | slice: , 1 }}", 17, "must be an integer, a quoted string, true or false"},
		{"bare word arg", "{{ data | slice: one }}", 17, "must be an integer, a quoted string, true or false"},
		{"plus sign", "{{ data | slice: +1 }}", 17, "must be an integer, a quoted string, true or false"},
		{"lone minus", "{{ data | slice: - }}", 17, "must be an integer, a quoted string, true or false"},
		{"missing comma", "{{ data | slice: 1 2 }}", 19, `unexpected '2'`},
		{"junk after int", "{{ data | slice: 1x }}", 18, `unexpected 'x'`},
		{"unicode junk", "{{ data | slice: 1é }}", 18, `unexpected 'é'`},
		{"101 filters", "{{ a" + strings.Repeat(" | upcase", 101) + " }}", 4 + 9*100 + 1, "at most 100 filters"},
		{"too long", strings.Repeat("x", 64<<10+1), 64 << 10, "longer than 65536 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := expr.Parse(tc.src)
			var xe *expr.Error
			if !errors.As(err, &xe) {
				t.Fatalf("Parse(%q) = %v, %v, want *Error", tc.src, tmpl, err)
			}
			if xe.Pos != tc.pos || !strings.Contains(xe.Msg, tc.msg) {
				t.Errorf("Parse(%q) = %v, want position %d: ...%s...", tc.src, xe, tc.pos, tc.msg)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	_, err := expr.Parse("{{ data.x | foo }}")
	if got, want := err.Error(), `position 12: unknown filter "foo"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
