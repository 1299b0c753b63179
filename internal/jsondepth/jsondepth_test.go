package jsondepth

import "testing"

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{``, 0},
		{`1`, 0},
		{`[]`, 1},
		{`{"a": [1, {"b": []}]}`, 4},
		{`["]]]", "[[[", "\"[["]`, 1},
		{`[[[`, 3},
		{`"\\"[[`, 2},
	} {
		if got := Of(tc.text); got != tc.want {
			t.Errorf("Of(%s) = %d, want %d", tc.text, got, tc.want)
		}
		if got := Of([]byte(tc.text)); got != tc.want {
			t.Errorf("Of([]byte(%s)) = %d, want %d", tc.text, got, tc.want)
		}
	}
}
