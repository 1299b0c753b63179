package jsoncheck

import (
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/jsondepth"
)

// Scan measures as jsondepth.Of does, on any text (JSON or not), and
// judges as Check does, in one walk.
func TestScanIsCheckAndDepthInOneWalk(t *testing.T) {
	texts := []string{
		``, `1`, `"a"`, `{}`, `[]`, `[[[]]]`, `{"a":[{"b":{}}]}`,
		`{"a": "[[[["}`, `{"a\"[": [1]}`, `]]][[[`, `[[[`, `"[[`, `{"a":"\u12"}`,
		`{"a": "\ud800", "b": [[[[1]]]]}`, `{"a": 1, "a": [[2]]}`, `["` + "\xff" + `", [[[]]]]`,
		strings.Repeat("[", 70) + strings.Repeat("]", 70),
		`{"a": "` + strings.Repeat(`\\`, 3) + `[", "b": [[1]]}`,
	}
	for _, text := range texts {
		depth, e := Scan(text)
		if want := jsondepth.Of(text); depth != want {
			t.Errorf("Scan(%q) depth = %d, jsondepth.Of = %d", text, depth, want)
		}
		if want := Check(text); (e == nil) != (want == nil) || e != nil && *e != *want {
			t.Errorf("Scan(%q) = %v, Check = %v", text, e, want)
		}
		depth, e = ScanStrings([]byte(text))
		if want := jsondepth.Of(text); depth != want {
			t.Errorf("ScanStrings(%q) depth = %d, jsondepth.Of = %d", text, depth, want)
		}
		if want := Strings(text); (e == nil) != (want == nil) || e != nil && *e != *want {
			t.Errorf("ScanStrings(%q) = %v, Strings = %v", text, e, want)
		}
	}
}

func FuzzScan(f *testing.F) {
	f.Add(`{"a": [1, {"b": "\ud800"}]}`)
	f.Add(`]]["[`)
	f.Fuzz(func(t *testing.T, text string) {
		depth, e := Scan(text)
		if want := jsondepth.Of(text); depth != want {
			t.Fatalf("Scan(%q) depth = %d, jsondepth.Of = %d", text, depth, want)
		}
		if want := Check(text); (e == nil) != (want == nil) || e != nil && *e != *want {
			t.Fatalf("Scan(%q) = %v, Check = %v", text, e, want)
		}
	})
}
