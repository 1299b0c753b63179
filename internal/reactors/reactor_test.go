package reactors

import "testing"

func TestNameMatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"card", "Charge Card", true},
		{"CARD", "charge card", true},
		{"bank", "Charge Card", false},
		{"charge*", "Charge Card", true},
		{"*card", "Charge Card Now", false},
		{"ch?rge*", "Charge/Card", true},
		{"[a]*", "[a] reactor", true},
		{`a\*`, `a\b`, true},
	} {
		if got := NameMatches(tc.pattern, tc.name); got != tc.want {
			t.Errorf("NameMatches(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestReactorOf(t *testing.T) {
	t.Parallel()
	r := ReactorOf(&Record{ID: "r1", Name: "R", ApplicationID: "app1"}, nil)
	if r.Configuration == nil || r.Application == nil || r.Application.ID != "app1" || r.Formula != nil {
		t.Errorf("ReactorOf = %+v, want an empty configuration, application app1, no formula", r)
	}
	if r := ReactorOf(&Record{ID: "r2"}, &Formula{ID: "f1"}); r.Application != nil || r.Formula.ID != "f1" {
		t.Errorf("ReactorOf = %+v, want no application and formula f1", r)
	}
}

func TestSameJSON(t *testing.T) {
	t.Parallel()
	if !SameJSON(map[string]any{"a": 1, "b": "x"}, map[string]any{"b": "x", "a": 1}) {
		t.Error("SameJSON of one map in two orders = false, want true")
	}
	if SameJSON(map[string]any{"a": 1}, map[string]any{"a": "1"}) {
		t.Error(`SameJSON({"a": 1}, {"a": "1"}) = true, want false`)
	}
	if SameJSON(func() {}, func() {}) {
		t.Error("SameJSON of values with no JSON = true, want false")
	}
}
