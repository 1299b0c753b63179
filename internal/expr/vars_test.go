package expr_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/expr"
)

func TestVars(t *testing.T) {
	vars := map[string]any{
		"data": map[string]any{
			"number": pan,
			"items":  []any{"a", map[string]any{"k": "v"}, []any{"x", "y"}},
			"obj":    map[string]any{"0": "zero", "a-b": "dash", "_u": "underscore"},
			"null":   nil,
		},
		"top": "level",
	}
	tests := []struct {
		root string
		want any
	}{
		{"top", "level"},
		{"data.number", pan},
		{"data.items.0", "a"},
		{"data.items.1.k", "v"},
		{"data.items.2.1", "y"},
		{"data.obj.0", "zero"},
		{"data.obj.a-b", "dash"},
		{"data.obj._u", "underscore"},
		{"data.items", vars["data"].(map[string]any)["items"]},
		{"missing", nil},
		{"data.missing", nil},
		{"data.missing.deeper", nil},
		{"data.items.3", nil},
		{"data.items.-1", nil},
		{"data.items.x", nil},
		{"data.items.01", nil},
		{"data.items.-0", nil},
		{"data.items.99999999999999999999", nil},
		{"data.number.0", nil},
		{"data.null.x", nil},
		{"top.x", nil},
	}
	resolve := expr.Vars(vars)
	for _, tc := range tests {
		got, err := resolve(tc.root)
		if err != nil {
			t.Errorf("Vars(...)(%q) = %v", tc.root, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Vars(...)(%q) (-want +got):\n%s", tc.root, diff)
		}
	}

	for _, root := range []string{"", ".", "data.", ".data", "data..number", "data number", "data/number",
		"data['x']", "data.number|last4", "data.$", "da ta", "0190a1b2 x", "'lit'"} {
		if got, err := resolve(root); err == nil {
			t.Errorf("Vars(...)(%q) = %v, nil, want an error", root, got)
		}
	}

	if got, err := expr.Vars(nil)("data.x"); got != nil || err != nil {
		t.Errorf("Vars(nil)(data.x) = %v, %v, want nil, nil", got, err)
	}
}
