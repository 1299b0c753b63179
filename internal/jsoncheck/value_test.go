package jsoncheck

import (
	"encoding/json"
	"testing"
	"time"
)

type inner struct {
	Name  string            `json:"name"`
	Tags  []string          `json:"tags,omitempty"`
	Meta  map[string]string `json:"metadata"`
	Skip  string            `json:"-"`
	Plain string
	hid   string
}

type outer struct {
	inner
	Data    any             `json:"data"`
	Raw     json.RawMessage `json:"raw,omitempty"`
	Bytes   []byte          `json:"bytes"`
	When    *time.Time      `json:"when,omitempty"`
	Pointer *inner          `json:"ptr,omitempty"`
}

func TestValue(t *testing.T) {
	bad := "caf\xe9"
	for _, tc := range []struct {
		name string
		v    any
		path string // "-": none
		key  bool
	}{
		{"nil", nil, "-", false},
		{"good", outer{inner: inner{Name: "é", Meta: map[string]string{"k": "\uFFFD"}}, Data: []any{"😀", 1, true}}, "-", false},
		{"ignored fields", outer{inner: inner{Skip: bad, hid: bad}, Bytes: []byte(bad)}, "-", false},
		{"string", bad, "", false},
		{"embedded field", outer{inner: inner{Name: bad}}, "name", false},
		{"untagged field", outer{inner: inner{Plain: bad}}, "Plain", false},
		{"map value", outer{inner: inner{Meta: map[string]string{"ref": bad}}}, "metadata.ref", false},
		{"map key", outer{inner: inner{Meta: map[string]string{bad: "x"}}}, "metadata", true},
		{"any", outer{Data: map[string]any{"a": []any{"x", bad}}}, "data.a[1]", false},
		{"slice", outer{inner: inner{Tags: []string{"a", "b", bad}}}, "tags[2]", false},
		{"raw message", outer{Raw: json.RawMessage(`{"x": "\ud800"}`)}, "raw.x", false},
		{"pointer", &outer{Pointer: &inner{Name: bad}}, "ptr.name", false},
		{"top-level array", []any{map[string]any{"data": bad}}, "[0].data", false},
		{"time", outer{When: new(time.Time)}, "-", false},
	} {
		e := Value(tc.v)
		if tc.path == "-" {
			if e != nil {
				t.Errorf("%s: Value = %v, want nil", tc.name, e)
			}
			continue
		}
		if e == nil || e.Path != tc.path || e.Key != tc.key || (e.Reason != ReasonUTF8) != (tc.name == "raw message") {
			t.Errorf("%s: Value = %+v, want path %q key %v", tc.name, e, tc.path, tc.key)
		}
	}
}
