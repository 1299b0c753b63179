// Command importgen writes generated card tokens in the exchange format
// (NDJSON, docs/transfer.md) for the import benchmark (bench/import.sh):
// -n lines, each a card with a unique Luhn-valid number, an id that is a
// UUID derived from the line's number (carrying none of the card's
// digits), metadata and a created_at.
//
//	go run ./bench/importgen -n 1000000 > cards.ndjson
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
)

func main() {
	n := flag.Int("n", 1000, "how many lines")
	seed := flag.String("seed", "bench", "makes the ids of one run differ from another's")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	for i := 0; i < *n; i++ {
		fmt.Fprintf(w, `{"id":"%s","type":"card","data":{"number":"%s","expiration_month":%d,"expiration_year":%d},"metadata":{"customer":"c%d"},"created_at":"2024-01-02T03:04:05Z"}`+"\n",
			uuidOf(*seed, i), cardNumber(i), 1+i%12, 2030+i%5, i)
	}
}

// uuidOf is a version-4-shaped UUID from a hash of seed and i.
func uuidOf(seed string, i int) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s/%d", seed, i))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	s := hex.EncodeToString(h[:16])
	return s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

// cardNumber is a 16-digit Luhn-valid number with the BIN 42424242 and i
// in its next 7 digits.
func cardNumber(i int) string {
	body := fmt.Sprintf("42424242%07d", i%10_000_000)
	sum := 0
	for k := len(body) - 1; k >= 0; k-- {
		d := int(body[k] - '0')
		if (len(body)-k)%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return body + string(rune('0'+(10-sum%10)%10))
}
