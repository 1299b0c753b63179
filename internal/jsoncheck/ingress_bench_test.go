package jsoncheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/jsondepth"
)

// BenchmarkBodyIngress compares what a POST /tokenize body went through
// before it was decoded (httpapi's Check, json.Valid, then the Vault's
// jsondepth.Of and Check again: four walks) with what it goes through now
// (one Scan), each followed by the one decode both make. Run with:
//
//	go test -run '^$' -bench BodyIngress -benchmem ./internal/jsoncheck
func BenchmarkBodyIngress(b *testing.B) {
	card := `{"type":"card","data":{"number":"4242424242424242","expiration_month":12,"expiration_year":2031,"cvc":"123"}}`
	values := make([]string, 1000)
	for i := range values {
		values[i] = fmt.Sprintf(`"value-%d"`, i)
	}
	for _, body := range []struct{ name, text string }{
		{"card", card},
		{"batch1000", "[" + strings.Join(values, ",") + "]"},
	} {
		text := []byte(body.text)
		b.Run(body.name+"/four-walks", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if Check(text) != nil || !json.Valid(text) || jsondepth.Of(text) > 64 || Check(text) != nil {
					b.Fatal("refused")
				}
				decode(b, text)
			}
		})
		b.Run(body.name+"/one-walk", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if depth, e := Scan(text); e != nil || depth > 64 {
					b.Fatal("refused")
				}
				decode(b, text)
			}
		})
	}
}

func decode(b *testing.B, text []byte) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		b.Fatal(err)
	}
}
