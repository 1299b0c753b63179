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

// plainCopy makes in one walk what checkGoText, json.Marshal and
// decodeJSON make in turn, and leaves anything else to them.
func TestPlainCopyIsTheLongWay(t *testing.T) {
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 42, 0.1, 1.5e-7, 1e-6, 9.99e-7, 1e20, 1e21, 1.2345e21,
		123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 53, -2.5e-10, 3e100}
	deep := any("x")
	for range MaxJSONDepth {
		deep = []any{deep}
	}
	plain := []any{
		nil, true, "", "é😀", json.Number("12.50"), json.Number("-0"), json.Number("1e+5"),
		int(-7), int64(1) << 60, int32(-3), uint64(math.MaxUint64),
		map[string]any{}, []any{}, map[string]any(nil), []any(nil),
		map[string]any{"type": "card", "data": map[string]any{"number": "4242424242424242", "expiration_month": 12,
			"expiration_year": 2031.0, "cvc": "123"}, "nested": []any{1.5, nil, map[string]any{"k": false}}},
		deep,
	}
	for _, f := range floats {
		plain = append(plain, f, -f)
	}
	for _, v := range plain {
		got, ok := plainCopy(v)
		want, err := normalizeJSON(v)
		if !ok || err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("plainCopy(%#v) = %#v, %v; the long way: %#v, %v", v, got, ok, want, err)
		}
	}
	m := map[string]any{"a": []any{"b"}}
	c, _ := plainCopy(m)
	c.(map[string]any)["a"].([]any)[0] = "changed"
	if m["a"].([]any)[0] != "b" {
		t.Error("plainCopy shares the caller's slices")
	}

	notPlain := []any{
		math.NaN(), math.Inf(1), float32(1.5), uint8(1), "\xff", map[string]any{"\xff": 1}, map[string]any{"a": "\xc3"},
		json.Number(""), json.Number("1."), json.Number("0x10"), json.Number("+1"), json.RawMessage(`{}`),
		struct{ A int }{1}, map[string]string{"a": "b"}, []string{"a"}, []any{deep},
	}
	for _, v := range notPlain {
		if got, ok := plainCopy(v); ok {
			t.Errorf("plainCopy(%#v) = %#v, true; want it left to the long way", v, got)
		}
	}
}

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

// FuzzPlainCopy holds plainCopy to the long way for the values a program
// or tenant code builds: decoded JSON with float64 numbers.
func FuzzPlainCopy(f *testing.F) {
	f.Add(`{"type":"card","data":{"number":"4242424242424242","expiration_month":12,"cvc":"123"}}`)
	f.Add(`[1e21, 1e-7, -0, 0.1, 123456789012345678901234567890, {"a": [null, true, "x"]}]`)
	f.Fuzz(func(t *testing.T, text string) {
		var v any
		if json.Unmarshal([]byte(text), &v) != nil {
			return
		}
		got, ok := plainCopy(v)
		want, err := normalizeJSON(v)
		if ok && (err != nil || !reflect.DeepEqual(got, want)) {
			t.Fatalf("plainCopy(%s) = %#v; the long way: %#v, %v", text, got, want, err)
		}
		if !ok && err == nil {
			t.Fatalf("plainCopy(%s) left to the long way, which takes it: %#v", text, want)
		}
	})
}
