package jsontext

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// PlainCopy makes in one walk what CheckGoText, json.Marshal and
// Decode make in turn, and leaves anything else to them.
func TestPlainCopyIsTheLongWay(t *testing.T) {
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 42, 0.1, 1.5e-7, 1e-6, 9.99e-7, 1e20, 1e21, 1.2345e21,
		123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 53, -2.5e-10, 3e100}
	deep := any("x")
	for range MaxDepth {
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
		got, ok := PlainCopy(v)
		want, err := Normalize(v)
		if !ok || err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("PlainCopy(%#v) = %#v, %v; the long way: %#v, %v", v, got, ok, want, err)
		}
	}
	m := map[string]any{"a": []any{"b"}}
	c, _ := PlainCopy(m)
	c.(map[string]any)["a"].([]any)[0] = "changed"
	if m["a"].([]any)[0] != "b" {
		t.Error("PlainCopy shares the caller's slices")
	}

	notPlain := []any{
		math.NaN(), math.Inf(1), float32(1.5), uint8(1), "\xff", map[string]any{"\xff": 1}, map[string]any{"a": "\xc3"},
		json.Number(""), json.Number("1."), json.Number("0x10"), json.Number("+1"), json.RawMessage(`{}`),
		struct{ A int }{1}, map[string]string{"a": "b"}, []string{"a"}, []any{deep},
	}
	for _, v := range notPlain {
		if got, ok := PlainCopy(v); ok {
			t.Errorf("PlainCopy(%#v) = %#v, true; want it left to the long way", v, got)
		}
	}
}

// FuzzPlainCopy holds PlainCopy to the long way for the values a program
// or tenant code builds: decoded JSON with float64 numbers.
func FuzzPlainCopy(f *testing.F) {
	f.Add(`{"type":"card","data":{"number":"4242424242424242","expiration_month":12,"cvc":"123"}}`)
	f.Add(`[1e21, 1e-7, -0, 0.1, 123456789012345678901234567890, {"a": [null, true, "x"]}]`)
	f.Fuzz(func(t *testing.T, text string) {
		var v any
		if json.Unmarshal([]byte(text), &v) != nil {
			return
		}
		got, ok := PlainCopy(v)
		want, err := Normalize(v)
		if ok && (err != nil || !reflect.DeepEqual(got, want)) {
			t.Fatalf("PlainCopy(%s) = %#v; the long way: %#v, %v", text, got, want, err)
		}
		if !ok && err == nil {
			t.Fatalf("PlainCopy(%s) left to the long way, which takes it: %#v", text, want)
		}
	})
}
