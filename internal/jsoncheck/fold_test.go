package jsoncheck_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/jsoncheck"
)

type foldRule struct {
	Permissions []string `json:"permissions"`
}

type foldEmbedded struct {
	Kind string `json:"kind"`
}

type foldApp struct {
	foldEmbedded
	Name      string            `json:"name"`
	Metadata  map[string]string `json:"metadata"`
	Rules     []foldRule        `json:"rules"`
	ByName    map[string]foldRule
	Raw       json.RawMessage `json:"raw"`
	Any       any             `json:"any"`
	ExpiresAt *time.Time      `json:"expires_at"`
}

// TestFold: keys that go into one struct field under encoding/json's
// matching (exact, else strings.EqualFold) are found at any depth, named
// by the field's JSON name; map keys, raw and any values keep exact
// keys. Every case that Fold refuses is one where encoding/json drops a
// value.
func TestFold(t *testing.T) {
	typ := reflect.TypeFor[foldApp]()
	for _, c := range []struct {
		text, path string
	}{
		{`{"name": "a", "NAME": "b"}`, "name"},
		{`{"name": "a", "Name": "b"}`, "name"},
		{`{"kind": "a", "KIND": "b"}`, "kind"},      // an embedded struct's field
		{`{"kind": "a", "\u212aind": "b"}`, "kind"}, // the Kelvin sign folds to k
		{`{"rules": [{"permissions": [], "permiſſions": ["x"]}]}`, "rules[0].permissions"},
		{`{"ByName": {"x": {"permissions": [], "PERMISSIONS": []}}}`, "ByName.x.permissions"},
		{`{"byname": {}, "BYNAME": {}}`, "ByName"},
		{`{"expires_at": null, "EXPIRES_AT": "2030-01-01T00:00:00Z"}`, "expires_at"},
		{`{"name": "a"}`, ""},
		{`{"metadata": {"a": "1", "A": "2"}}`, ""},
		{`{"raw": {"a": 1, "A": 2}, "any": {"b": 1, "B": 2}}`, ""},
		{`{"nameX": "a", "NAMEX": "b"}`, ""}, // unknown fields: the decoder's to refuse
		{`[1, 2]`, ""},
	} {
		e := jsoncheck.FoldText([]byte(c.text), typ)
		switch {
		case c.path == "" && e != nil:
			t.Errorf("FoldText(%s) = %v, want nil", c.text, e)
		case c.path != "" && (e == nil || e.Path != c.path || e.Reason != jsoncheck.ReasonFoldDuplicate):
			t.Errorf("FoldText(%s) = %v, want a duplicate at %q", c.text, e, c.path)
		}
		if c.path == "" {
			continue
		}
		// encoding/json keeps one value of the two: the check is not
		// stricter than the decoder.
		var first, last foldApp
		json.Unmarshal([]byte(c.text), &first)
		swapped := swapFirstPair(c.text)
		if swapped == c.text {
			continue // nested: the table's top-level cases show it
		}
		json.Unmarshal([]byte(swapped), &last)
		if reflect.DeepEqual(first, last) && !strings.Contains(c.text, "null") && !strings.Contains(c.text, "{}") {
			t.Errorf("%s and %s decode alike: not a lost value", c.text, swapped)
		}
	}
}

// swapFirstPair is text, an object of two members, with their values
// swapped and its keys in the same order; any other text as it is.
func swapFirstPair(text string) string {
	dec := json.NewDecoder(strings.NewReader(text))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return text
	}
	var keys []string
	var values []json.RawMessage
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return text
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return text
		}
		keys, values = append(keys, k.(string)), append(values, v)
	}
	if len(keys) != 2 {
		return text
	}
	return fmt.Sprintf(`{%q: %s, %q: %s}`, keys[0], values[1], keys[1], values[0])
}

// TestScanFolds: the scan reports an object that may hold keys equal but
// for case, so that Fold runs only then; an object of more keys than it
// compares one by one always counts.
func TestScanFolds(t *testing.T) {
	many := `{`
	for i := range 20 {
		many += fmt.Sprintf(`"k%d": %d, `, i, i)
	}
	many += `"z": 0}`
	for text, want := range map[string]bool{
		`{"a": 1, "b": 2}`:                             false,
		`{"a": 1, "A": 2}`:                             true,
		`{"x": {"kelvin": 1, "\u212aelvin": 2}}`:       true,
		"{\"x\": {\"kelvin\": 1, \"\u212aelvin\": 2}}": true, // the sign itself, unescaped
		`{"s": 1, "ſ": 2}`:                             true,
		`[{"a": 1}, {"A": 2}]`:                         false,
		many:                                           true,
	} {
		_, folds, e := jsoncheck.ScanFolds([]byte(text))
		if e != nil || folds != want {
			t.Errorf("ScanFolds(%.60s) = %v, %v; want %v", text, folds, e, want)
		}
	}
}

// FuzzScanFolds: the scan's folds is never false where an object holds
// two keys equal but for case (found here by decoding), since Fold is
// skipped then.
func FuzzScanFolds(f *testing.F) {
	for _, s := range []string{`{"a": 1, "A": 2}`, `{"s": {"ſ": 1, "S": 2}}`, `[{"k": 1}, {"\u212a": 2}]`,
		`{"x": 1, "\u0058": 2}`, `{"Kelvin": 1, "kelvin": 2}`, `{"a": [1, {"b": 2, "B": 3}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		_, folds, e := jsoncheck.ScanFolds(text)
		if e != nil || !json.Valid(text) || folds {
			return
		}
		var v any
		if json.Unmarshal(text, &v) != nil {
			return
		}
		if hasFoldedKeys(v) {
			t.Errorf("ScanFolds(%q) = false, but an object holds keys equal but for case", text)
		}
	})
}

// hasFoldedKeys reports whether an object in v holds two keys equal under
// strings.EqualFold.
func hasFoldedKeys(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k, e := range x {
			for _, o := range keys {
				if strings.EqualFold(o, k) {
					return true
				}
			}
			keys = append(keys, k)
			if hasFoldedKeys(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasFoldedKeys(e) {
				return true
			}
		}
	}
	return false
}
