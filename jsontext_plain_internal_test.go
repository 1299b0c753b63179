package tokenvault

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault/internal/jsoncheck"
)

// A jsoncheck.Doc (httpapi's checked and decoded body) is taken as it is:
// neither walked nor decoded again, only its depth held to MaxJSONDepth.
func TestDocIsTakenAsItIs(t *testing.T) {
	body := map[string]any{"ssn": "078-05-1120", "card": map[string]any{"type": "card"}}
	var walks countedWalks
	defer walks.start()()
	for name, fn := range map[string]func(any) (any, error){"tokenizeBody": tokenizeBody, "normalizeArgs": normalizeArgs} {
		got, err := fn(jsoncheck.Checked(body, 2))
		if err != nil || reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(body).UnsafePointer() {
			t.Errorf("%s(Doc) = %v, %v; want the Doc's own value", name, got, err)
		}
		_, err = fn(jsoncheck.Checked(nil, MaxJSONDepth+1))
		if !errors.Is(err, errTooDeep) {
			t.Errorf("%s(a Doc too deep) = %v, want errTooDeep", name, err)
		}
	}
	if n := walks.n.Load(); n != 0 {
		t.Errorf("taking Docs walked %d texts, want none", n)
	}
}

// Raw JSON is walked once (strings, keys and depth together) before it is
// decoded; plain Go values are not walked as text at all.
func TestRawBodyIsWalkedOnce(t *testing.T) {
	var walks countedWalks
	defer walks.start()()
	for _, body := range []any{json.RawMessage(`{"a": [1, {"b": "c"}]}`), []byte(`[1]`)} {
		walks.n.Store(0)
		if _, err := tokenizeBody(body); err != nil {
			t.Fatal(err)
		}
		if n := walks.n.Load(); n != 1 {
			t.Errorf("tokenizeBody(%s) walked the text %d times, want 1", body, n)
		}
	}
	walks.n.Store(0)
	if _, err := normalizeArgs(json.RawMessage(`{"a": "b"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := tokenizeBody(map[string]any{"a": "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := normalizeArgs(map[string]any{"a": 1.5}); err != nil {
		t.Fatal(err)
	}
	if n := walks.n.Load(); n != 1 {
		t.Errorf("raw args and plain values walked %d texts, want 1 (the raw args)", n)
	}
	// The errors are those of the long way.
	if _, err := normalizeArgs(json.RawMessage(`{"a": {"b": "\ud800"}}`)); !hasField(err, "args.a.b") {
		t.Errorf("raw args with a lone surrogate: %v, want a field error on args.a.b", err)
	}
	if _, err := tokenizeBody(map[string]any{"a": math.NaN()}); !hasField(err, "") {
		t.Errorf("a NaN: %v, want the body refused", err)
	}
	if _, err := tokenizeBody(map[string]any{"a": map[string]any{"\xff": 1}}); !hasField(err, "a") {
		t.Errorf("a key that is not UTF-8: %v, want a field error on a", err)
	}
}

// countedWalks counts jsoncheck's walks of texts while a test runs.
type countedWalks struct{ n atomic.Int64 }

func (c *countedWalks) start() (stop func()) { return jsoncheck.CountWalks(&c.n) }

func hasField(err error, field string) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	_, ok := e.Fields[field]
	return ok
}
