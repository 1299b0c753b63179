package jsontext

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault/internal/jsoncheck"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// A jsoncheck.Doc (httpapi's checked and decoded body) is taken as it is
// by Value: neither walked nor decoded again, only its depth held to
// MaxDepth. (internal/tokens holds DecodeBody, the tokenize body's
// reader, to the same.)
func TestDocValueIsTakenAsItIs(t *testing.T) {
	body := map[string]any{"ssn": "078-05-1120", "card": map[string]any{"type": "card"}}
	var walks countedWalks
	defer walks.start()()
	got, err := Value(jsoncheck.Checked(body, 2), "args")
	if err != nil || reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(body).UnsafePointer() {
		t.Errorf("Value(Doc) = %v, %v; want the Doc's own value", got, err)
	}
	_, err = Value(jsoncheck.Checked(nil, MaxDepth+1), "args")
	if !errors.Is(err, ErrTooDeep) {
		t.Errorf("Value(a Doc too deep) = %v, want ErrTooDeep", err)
	}
	if n := walks.n.Load(); n != 0 {
		t.Errorf("taking Docs walked %d texts, want none", n)
	}
}

// Raw JSON is walked once (strings, keys and depth together) before it is
// decoded; plain Go values are not walked as text at all. The errors are
// those of the long way, named under the field.
func TestRawValueIsWalkedOnce(t *testing.T) {
	var walks countedWalks
	defer walks.start()()
	if _, err := Value(json.RawMessage(`{"a": "b"}`), "args"); err != nil {
		t.Fatal(err)
	}
	if _, err := Value(map[string]any{"a": 1.5}, "args"); err != nil {
		t.Fatal(err)
	}
	if n := walks.n.Load(); n != 1 {
		t.Errorf("raw args and plain values walked %d texts, want 1 (the raw args)", n)
	}
	if got, err := Value(nil, "args"); got != nil || err != nil {
		t.Errorf("Value(nil) = %v, %v; want nil, nil", got, err)
	}
	if _, err := Value(json.RawMessage(`{"a": {"b": "\ud800"}}`), "args"); !hasField(err, "args.a.b") {
		t.Errorf("raw args with a lone surrogate: %v, want a field error on args.a.b", err)
	}
	if _, err := Value(json.RawMessage(`{"a": `), "args"); !hasField(err, "args") {
		t.Errorf("raw args cut short: %v, want a field error on args", err)
	}
	if _, err := Value(map[string]any{"a": math.NaN()}, "args"); !hasField(err, "args") {
		t.Errorf("a NaN: %v, want a field error on args", err)
	}
}

// countedWalks counts jsoncheck's walks of texts while a test runs. The
// count is the process's: the tests that read it do not run in parallel.
type countedWalks struct{ n atomic.Int64 }

func (c *countedWalks) start() (stop func()) { return jsoncheck.CountWalks(&c.n) }

// hasField reports whether err is a unit error naming field.
func hasField(err error, field string) bool {
	var e *unit.Error
	if !errors.As(err, &e) {
		return false
	}
	_, ok := e.Fields[field]
	return ok
}
