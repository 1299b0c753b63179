package reactors

import (
	"testing"

	"github.com/tokenvault/tokenvault/internal/unit"
)

func TestReactorResult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		result        any
		raw, tokenize any
		kind          unit.Kind // 0: no error
	}{
		{"nothing", nil, nil, nil, 0},
		{"raw only", map[string]any{"raw": "r"}, "r", nil, 0},
		{"both", map[string]any{"raw": 1.0, "tokenize": map[string]any{"data": "x"}}, 1.0, "x", 0},
		{"not an object", []any{1.0}, nil, nil, unit.CodeFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, tk, err := ReactorResult(tc.result)
			if unit.ErrorKind(err) != tc.kind && (tc.kind != 0 || err != nil) {
				t.Fatalf("ReactorResult(%v) = %v, want kind %v", tc.result, err, tc.kind)
			}
			if tc.kind != 0 {
				return
			}
			if raw != tc.raw {
				t.Errorf("ReactorResult(%v) raw = %v, want %v", tc.result, raw, tc.raw)
			}
			got := ""
			if m, ok := tk.(map[string]any); ok {
				got, _ = m["data"].(string)
			}
			if want, _ := tc.tokenize.(string); got != want {
				t.Errorf("ReactorResult(%v) tokenize = %v, want data %q", tc.result, tk, want)
			}
		})
	}
}
