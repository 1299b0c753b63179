package tokens

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault/internal/jsoncheck"
	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// A jsoncheck.Doc (httpapi's checked and decoded body) is taken as it is
// by DecodeBody: neither walked nor decoded again, only its depth held to
// jsontext.MaxDepth. (internal/jsontext holds Value, the reader of tenant
// code's arguments, to the same.)
func TestDocIsTakenAsItIs(t *testing.T) {
	body := map[string]any{"ssn": "078-05-1120", "card": map[string]any{"type": "card"}}
	var walks countedWalks
	defer walks.start()()
	got, err := DecodeBody(jsoncheck.Checked(body, 2))
	if err != nil || reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(body).UnsafePointer() {
		t.Errorf("DecodeBody(Doc) = %v, %v; want the Doc's own value", got, err)
	}
	_, err = DecodeBody(jsoncheck.Checked(nil, jsontext.MaxDepth+1))
	if !errors.Is(err, jsontext.ErrTooDeep) {
		t.Errorf("DecodeBody(a Doc too deep) = %v, want ErrTooDeep", err)
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
		if _, err := DecodeBody(body); err != nil {
			t.Fatal(err)
		}
		if n := walks.n.Load(); n != 1 {
			t.Errorf("DecodeBody(%s) walked the text %d times, want 1", body, n)
		}
	}
	walks.n.Store(0)
	if _, err := DecodeBody(map[string]any{"a": "b"}); err != nil {
		t.Fatal(err)
	}
	if n := walks.n.Load(); n != 0 {
		t.Errorf("a plain body walked %d texts, want none", n)
	}
	// The errors are those of the long way.
	if _, err := DecodeBody(map[string]any{"a": math.NaN()}); !hasField(err, "") {
		t.Errorf("a NaN: %v, want the body refused", err)
	}
	if _, err := DecodeBody(map[string]any{"a": map[string]any{"\xff": 1}}); !hasField(err, "a") {
		t.Errorf("a key that is not UTF-8: %v, want a field error on a", err)
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
