package jsonpatch

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"

	"github.com/tokenvault/tokenvault/internal/jsoncheck"
	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Merge applies an RFC 7386 JSON merge patch to target and returns the
// result: an object patch merges key by key, null removes a key, anything
// else replaces the target. target is not modified.
func Merge(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	out := make(map[string]any, len(t)+len(p))
	if ok {
		for k, v := range t {
			out[k] = v
		}
	}
	for k, v := range p {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = Merge(out[k], v)
	}
	return out
}

// Decode reads a merge patch that must be an object whose top-level
// fields are among allowed; what names the resource in errors.
func Decode(patch json.RawMessage, what string, allowed ...string) (map[string]any, error) {
	doc, err := jsontext.Decode(patch)
	if jsontext.Refused(err) {
		return nil, err
	}
	if err != nil {
		return nil, unit.InvalidField("", "the body is not valid JSON")
	}
	fields, ok := doc.(map[string]any)
	if !ok {
		return nil, unit.InvalidField("", "a %s patch must be an object", what)
	}
	fe := unit.FieldErrors{}
	for k := range fields {
		if !slices.Contains(allowed, k) {
			fe.Add(k, "unknown or unchangeable field")
		}
	}
	return fields, fe.Err()
}

// Apply applies fields to the JSON form of current and decodes the result
// into dst, which is then validated like any full request.
func Apply(current any, fields map[string]any, dst any) error {
	b, err := json.Marshal(current)
	if err != nil {
		return unit.AsInternal(err)
	}
	doc, err := jsontext.Decode(b)
	if err != nil {
		return unit.AsInternal(err)
	}
	mergedDoc := Merge(doc, fields)
	// A patch's key equal but for case to a field's ({"request_transform":
	// {"CODE": ...}}) goes into the same field as the one it patches, or
	// as another key of the patch: one value would be dropped unseen.
	if e := jsoncheck.Fold(mergedDoc, reflect.TypeOf(dst)); e != nil {
		return unit.InvalidField(e.Path, "%s", e.Message())
	}
	merged, err := json.Marshal(mergedDoc)
	if err != nil {
		return unit.AsInternal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(merged))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return unit.InvalidField("", "the patched resource is not valid: %s", err.Error())
	}
	return nil
}
