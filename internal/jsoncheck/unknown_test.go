package jsoncheck

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

type ufInner struct {
	Name string `json:"name"`
	Skip string `json:"-"`
}

type UFEmbedded struct {
	Extra string `json:"extra"`
}

type ufOuter struct {
	UFEmbedded
	ID      string             `json:"id"`
	Items   []ufInner          `json:"items"`
	ByName  map[string]ufInner `json:"by_name"`
	Ptr     *ufInner           `json:"ptr"`
	Any     any                `json:"any"`
	At      *time.Time         `json:"at"`
	Raw     json.RawMessage    `json:"raw"`
	Tags    map[string]string  `json:"tags"`
	NoTag   int
	private int
}

// UnknownField names the key encoding/json refuses with
// DisallowUnknownFields (which says it only in its error's text), and
// nothing when encoding/json refuses none.
func TestUnknownFieldAgreesWithEncodingJSON(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{`{"id": "a", "items": [{"name": "x"}], "by_name": {"k": {"name": "y"}}, "ptr": {"name": "z"}}`, ""},
		{`{"ID": "a", "EXTRA": "e", "notag": 1, "Any": {"whatever": [{"x": 1}]}, "raw": {"free": 1}}`, ""},
		{`{"at": "2030-01-02T15:04:05Z", "tags": {"free": "v"}}`, ""},
		{`{"id": "a", "bogus": 1, "other": 2}`, "bogus"},
		{`{"items": [{"name": "x"}, {"nmae": "y"}]}`, "nmae"},
		{`{"by_name": {"k": {"name": "y", "Skip": "s"}}}`, "Skip"},
		{`{"ptr": {"x\"y": 1}}`, `x"y`},
		{`{"private": 1}`, "private"},
		{`{"items": {"not": "an array"}, "zzz": 1}`, "zzz"},
	} {
		var v ufOuter
		dec := json.NewDecoder(strings.NewReader(tc.text))
		dec.DisallowUnknownFields()
		err := dec.Decode(&v)
		var typ *json.UnmarshalTypeError
		stdName := ""
		errors.As(err, &typ)
		// The test compares with encoding/json's text; the code never reads it.
		if rest, ok := strings.CutPrefix(errText(err), "json: unknown field "); ok && typ == nil {
			stdName, _ = strconv.Unquote(rest)
		}
		u := UnknownField([]byte(tc.text), reflect.TypeFor[*ufOuter]())
		got := ""
		if u != nil {
			got = u.Name
		}
		if got != tc.want || typ == nil && stdName != tc.want {
			t.Errorf("UnknownField(%s) = %q, want %q (encoding/json: %v)", tc.text, got, tc.want, err)
		}
	}
	if u := UnknownField([]byte(`{"a": 1}`), reflect.TypeFor[map[string]any]()); u != nil {
		t.Errorf("a map has no unknown field: %v", u)
	}
	if u := UnknownField([]byte(`{"a": `), reflect.TypeFor[ufOuter]()); u == nil || u.Name != "a" {
		t.Errorf("a cut text: %v, want the key read before the cut", u)
	}
	if u := UnknownField([]byte(`not json`), reflect.TypeFor[ufOuter]()); u != nil {
		t.Errorf("text that is not JSON: %v", u)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
