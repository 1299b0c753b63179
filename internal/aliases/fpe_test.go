package aliases

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

func TestCheckFPE(t *testing.T) {
	t.Parallel()
	values := []string{"4242424242424242"}
	for _, tc := range []struct {
		name       string
		req        FPERequest
		field, msg string // "" for a request that passes
	}{
		{"digits", FPERequest{Transformation: "digits", Values: values}, "", ""},
		{"alphabet", FPERequest{Alphabet: "abc", Tweak: "t", Values: values}, "", ""},
		{"both", FPERequest{Transformation: "digits", Alphabet: "abc", Values: values}, "alphabet", "give a transformation or an alphabet, not both"},
		{"neither", FPERequest{Values: values}, "transformation", "is required (or an alphabet)"},
		{"unknown transformation", FPERequest{Transformation: "hex", Values: values}, "transformation", ""},
		{"alphabet of one", FPERequest{Alphabet: "a", Values: values}, "alphabet", ""},
		{"negative version", FPERequest{Transformation: "digits", KeyVersion: -1, Values: values}, "key_version", "must be a key version (1 or more), or absent for the current one"},
		{"tweak not UTF-8", FPERequest{Transformation: "digits", Tweak: "\xff", Values: values}, "tweak", "is not valid UTF-8"},
		{"tweak too long", FPERequest{Transformation: "digits", Tweak: strings.Repeat("t", 257), Values: values}, "tweak", "must be at most 256 bytes"},
		{"no values", FPERequest{Transformation: "digits"}, "values", "must hold at least one value"},
		{"too many values", FPERequest{Transformation: "digits", Values: make([]string, MaxFPEValues+1)}, "values", "must hold at most 100 values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := CheckFPE(tc.req)
			if tc.field == "" {
				if err != nil || tr == nil {
					t.Fatalf("CheckFPE = %v, %v; want a transformation", tr, err)
				}
				return
			}
			var e *unit.Error
			if !errors.As(err, &e) || e.Kind != unit.Invalid || len(e.Fields[tc.field]) == 0 {
				t.Fatalf("CheckFPE = %v, want Invalid at %s", err, tc.field)
			}
			if got := e.Fields[tc.field][0]; tc.msg != "" && got != tc.msg || strings.HasPrefix(got, "fpe: ") {
				t.Errorf("CheckFPE says %q at %s, want %q (never the fpe package's prefix)", got, tc.field, tc.msg)
			}
		})
	}
}

func TestCheckFPEEncode(t *testing.T) {
	t.Parallel()
	values := []string{"4242424242424242"}
	if _, err := CheckFPEEncode(FPERequest{Transformation: "digits", Values: values}); err != nil {
		t.Errorf("CheckFPEEncode(current version) = %v, want nil", err)
	}
	if e := invalidAt(checkFPEEncodeErr(FPERequest{Transformation: "digits", KeyVersion: 1, Values: values}), "key_version"); !strings.HasPrefix(e, "is for decoding") {
		t.Errorf("CheckFPEEncode(key version 1) at key_version = %q, want \"is for decoding...\"", e)
	}
	// The request's own problems come first, as for a decoding.
	if e := invalidAt(checkFPEEncodeErr(FPERequest{Transformation: "nope", KeyVersion: 1, Values: values}), "transformation"); e == "" {
		t.Errorf("CheckFPEEncode(bad transformation, key version 1) is not Invalid at transformation")
	}
}

// checkFPEEncodeErr is the error of CheckFPEEncode.
func checkFPEEncodeErr(req FPERequest) error {
	_, err := CheckFPEEncode(req)
	return err
}

func TestFPEName(t *testing.T) {
	t.Parallel()
	if got := FPEName(FPERequest{Transformation: "card_bin"}); got != "card_bin" {
		t.Errorf("FPEName(card_bin) = %q, want card_bin", got)
	}
	if got := FPEName(FPERequest{Alphabet: "abc"}); got != "alphabet" {
		t.Errorf("FPEName(an alphabet) = %q, want alphabet", got)
	}
}

// newTenant is a unit of work over a new memory store holding one
// tenant's keyring; it records the audit lines it writes.
func newTenant(t *testing.T, tid string) *worktest.Work {
	t.Helper()
	w := worktest.New(t)
	w.Tenant(t, tid)
	return w
}

// run is RunFPE in a read of w.
func run(t *testing.T, w *worktest.Work, tid string, req FPERequest, enc bool) (*FPEResult, error) {
	t.Helper()
	tr, err := CheckFPE(req)
	if err != nil {
		t.Fatalf("CheckFPE: %v", err)
	}
	var out *FPEResult
	err = w.View(context.Background(), func(tx *unit.Tx) error {
		out, err = RunFPE(tx, tid, tr, req, enc)
		return err
	})
	return out, err
}

func TestRunFPE(t *testing.T) {
	t.Parallel()
	w := newTenant(t, "t1")
	values := []string{"4242424242424242", "1234-5678"}
	enc, err := run(t, w, "t1", FPERequest{Transformation: "digits", Tweak: "orders", Values: values}, true)
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	if enc.KeyVersion != 1 || len(enc.Values) != 2 || enc.Values[0] == values[0] || enc.Values[1][4] != '-' {
		t.Fatalf("encoding gave %+v, want two values of version 1, changed, keeping the dash", enc)
	}
	dec, err := run(t, w, "t1", FPERequest{Transformation: "digits", Tweak: "orders", KeyVersion: 1, Values: enc.Values}, false)
	if err != nil || !slices.Equal(dec.Values, values) {
		t.Fatalf("decoding gave %+v, %v; want %q", dec, err, values)
	}
	_, err = run(t, w, "t1", FPERequest{Transformation: "digits", Values: []string{"123456", "12a456"}}, true)
	if e := invalidAt(err, "values[1]"); e == "" || strings.Contains(e, "12a456") {
		t.Errorf("encoding a letter as a digit = %v, want Invalid at values[1], not quoting it", err)
	}
	_, err = run(t, w, "t1", FPERequest{Transformation: "digits", KeyVersion: 2, Values: values}, false)
	if e := invalidAt(err, "key_version"); e != "the tenant has FPE key versions 1 to 1" {
		t.Errorf("decoding with a version the tenant never had = %v, want Invalid at key_version", err)
	}
}

func TestRotateFPEKey(t *testing.T) {
	t.Parallel()
	w := newTenant(t, "t1")
	values := []string{"4242424242424242"}
	before, err := run(t, w, "t1", FPERequest{Transformation: "digits", Values: values}, true)
	if err != nil {
		t.Fatal(err)
	}
	cache := &keyCache{}
	err = w.Update(context.Background(), func(tx *unit.Tx) error {
		version, err := RotateFPEKey(tx, unit.Actor{ID: "u1", Type: unit.ActorUser}, "t1", cache)
		if err == nil && version != 2 {
			t.Errorf("RotateFPEKey made version %d, want 2", version)
		}
		if len(cache.cached) != 0 {
			t.Errorf("RotateFPEKey cached %v before its transaction committed", cache.cached)
		}
		return err
	})
	if err != nil {
		t.Fatalf("RotateFPEKey: %v", err)
	}
	if len(cache.cached) != 1 || cache.cached[0] != "t1 2" {
		t.Errorf("RotateFPEKey cached %v after its commit, want [t1 2]", cache.cached)
	}
	want := auditchain.Line{ActorID: "u1", ActorType: unit.ActorUser, EntityType: unit.EntityTenant, EntityID: "t1",
		Operation: unit.OpUpdate, Message: "FPE key rotated to version 2"}
	if l := w.Lines(); len(l) != 1 || l[0].TenantID != "t1" || l[0].Line != want {
		t.Errorf("RotateFPEKey logged %+v, want one line of t1 %+v", l, want)
	}
	// The keyring this instance cached is version 1: a request for
	// version 2 reads the stored one.
	after, err := run(t, w, "t1", FPERequest{Transformation: "digits", KeyVersion: 2, Values: before.Values}, false)
	if err != nil || slices.Equal(after.Values, values) {
		t.Errorf("decoding version 1's value with version 2 = %+v, %v; want another value", after, err)
	}
	again, err := run(t, w, "t1", FPERequest{Transformation: "digits", KeyVersion: 1, Values: before.Values}, false)
	if err != nil || !slices.Equal(again.Values, values) {
		t.Errorf("decoding with version 1 after the rotation = %+v, %v; want %q", again, err, values)
	}
	// A rotation rolled back caches nothing.
	rolled := &keyCache{}
	_ = w.Update(context.Background(), func(tx *unit.Tx) error {
		if _, err := RotateFPEKey(tx, unit.Actor{ID: "u1", Type: unit.ActorUser}, "t1", rolled); err != nil {
			return err
		}
		return unit.Errorf(unit.Conflict, "roll back")
	})
	if len(rolled.cached) != 0 {
		t.Errorf("a rolled back RotateFPEKey cached %v, want nothing", rolled.cached)
	}
}

// keyCache records what RotateFPEKey hands to the cache, as "tid version",
// without caching it: the instance keeps reading the stored keyring.
type keyCache struct{ cached []string }

func (c *keyCache) CacheKeys(tid string, ks *barrier.Keys) {
	c.cached = append(c.cached, fmt.Sprintf("%s %d", tid, ks.FPEVersion()))
}

// invalidAt is the first problem err reports at field, "" when err is not
// Invalid there.
func invalidAt(err error, field string) string {
	var e *unit.Error
	if !errors.As(err, &e) || e.Kind != unit.Invalid || len(e.Fields[field]) == 0 {
		return ""
	}
	return e.Fields[field][0]
}
