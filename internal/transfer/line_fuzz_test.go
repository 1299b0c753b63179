package transfer

import (
	"io"
	"strings"
	"testing"
)

// FuzzReaders feeds any text to the readers of every format: none
// panics, each line read has a number past the last, and a reason never
// holds a digit run of the input (reasons never quote data).
func FuzzReaders(f *testing.F) {
	f.Add(`{"id":"a01","type":"token","data":"4242424242424242"}` + "\n{\n")
	f.Add("id,type,data\nt01,token,\"x\ny\"\n")
	f.Add(`{"data":[{"id":"t01","type":"card","data":{"number":"4242424242424242"}},3]}`)
	f.Fuzz(func(t *testing.T, src string) {
		for _, format := range Formats {
			r, err := NewReader(format, strings.NewReader(src), 0, 0)
			if err != nil {
				continue
			}
			last := int64(0)
			for range 1000 {
				l, err := r.Next()
				if err != nil {
					if err != io.EOF && strings.Contains(err.Error(), "4242424242") {
						t.Fatalf("%s: error %q quotes the input", format, err)
					}
					break
				}
				if l.Number <= last {
					t.Fatalf("%s: line %d after %d", format, l.Number, last)
				}
				last = l.Number
				if strings.Contains(l.Problem, "4242424242") {
					t.Fatalf("%s: reason %q quotes the input", format, l.Problem)
				}
			}
		}
	})
}
