package jsonpatch

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tokenvault/tokenvault/internal/jsontext"
)

// FuzzMergePatch applies arbitrary JSON merge patches to arbitrary JSON
// targets (both decoded as the Vault decodes bodies, numbers as
// json.Number; inputs that are not JSON are skipped). Merge must not
// panic nor modify its inputs, and must follow RFC 7386:
//
//   - a patch that is not an object replaces the target;
//   - an object patch gives an object: members the patch does not name
//     are the target's (none when the target is not an object), null
//     members are removed, and every other member is the member's own
//     patch applied to the target's;
//   - {} leaves an object target as it is;
//   - applying a patch twice is applying it once.
//
// Seeds are in testdata/fuzz/FuzzMergePatch.
func FuzzMergePatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, target, patch []byte) {
		tdoc, err := jsontext.Decode(target)
		if err != nil {
			return
		}
		pdoc, err := jsontext.Decode(patch)
		if err != nil {
			return
		}
		// Fresh copies to compare with: decoding twice gives equal values
		// that share nothing.
		tcopy, _ := jsontext.Decode(target)
		pcopy, _ := jsontext.Decode(patch)

		got := Merge(tdoc, pdoc)
		if !reflect.DeepEqual(tdoc, tcopy) {
			t.Fatalf("Merge modified its target %s", target)
		}
		if !reflect.DeepEqual(pdoc, pcopy) {
			t.Fatalf("Merge modified its patch %s", patch)
		}
		if _, err := json.Marshal(got); err != nil {
			t.Fatalf("Merge(%s, %s) has no JSON form: %v", target, patch, err)
		}
		checkMerged(t, "", tcopy, pcopy, got)

		if again := Merge(got, pdoc); !reflect.DeepEqual(again, got) {
			t.Fatalf("Merge is not idempotent: %s patched with %s gives %s, then %s", target, patch, mustMarshal(got), mustMarshal(again))
		}
		if !reflect.DeepEqual(pdoc, pcopy) {
			t.Fatalf("Merge modified its patch %s when applied twice", patch)
		}

		empty := Merge(tdoc, map[string]any{})
		if obj, ok := tcopy.(map[string]any); ok {
			if !reflect.DeepEqual(empty, obj) {
				t.Fatalf("Merge(%s, {}) = %s, want the target", target, mustMarshal(empty))
			}
		} else if !reflect.DeepEqual(empty, map[string]any{}) {
			t.Fatalf("Merge(%s, {}) = %s, want {}", target, mustMarshal(empty))
		}
		// The result patched onto itself as a patch: a null-free object
		// patch; applied to {} it gives the result back, unless the result
		// holds nulls inside (arrays and values the patch replaced whole
		// may).
		if obj, ok := got.(map[string]any); ok && !hasNull(obj) {
			if back := Merge(map[string]any{}, obj); !reflect.DeepEqual(back, obj) {
				t.Fatalf("Merge({}, %s) = %s, want it back", mustMarshal(obj), mustMarshal(back))
			}
		}
	})
}

// checkMerged checks got = MergePatch(target, patch) member by member,
// against RFC 7386 section 2.
func checkMerged(t *testing.T, path string, target, patch, got any) {
	t.Helper()
	p, ok := patch.(map[string]any)
	if !ok {
		if !reflect.DeepEqual(got, patch) {
			t.Fatalf("at %q: a non-object patch %s gave %s, want the patch", path, mustMarshal(patch), mustMarshal(got))
		}
		return
	}
	g, ok := got.(map[string]any)
	if !ok {
		t.Fatalf("at %q: an object patch gave %s, not an object", path, mustMarshal(got))
	}
	tobj, _ := target.(map[string]any) // nil when the target is not an object
	for k, tv := range tobj {
		if _, patched := p[k]; patched {
			continue
		}
		if gv, ok := g[k]; !ok || !reflect.DeepEqual(gv, tv) {
			t.Fatalf("at %q: member %q, not in the patch, changed from %s to %s", path, k, mustMarshal(tv), mustMarshal(gv))
		}
	}
	for k, pv := range p {
		gv, present := g[k]
		if pv == nil {
			if present {
				t.Fatalf("at %q: member %q patched with null is still there: %s", path, k, mustMarshal(gv))
			}
			continue
		}
		if !present {
			t.Fatalf("at %q: member %q patched with %s is missing", path, k, mustMarshal(pv))
		}
		checkMerged(t, path+"/"+k, tobj[k], pv, gv)
	}
	for k := range g {
		_, inTarget := tobj[k]
		_, inPatch := p[k]
		if !inTarget && !inPatch {
			t.Fatalf("at %q: member %q is in neither target nor patch", path, k)
		}
	}
}

// hasNull reports whether v holds a null anywhere.
func hasNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	}
	return false
}

func mustMarshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}
