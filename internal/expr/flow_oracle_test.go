package expr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"github.com/tokenvault/tokenvault/internal/fpe"
)

// The differential oracle of the flow analysis, independent of it: a
// template is evaluated over a card and over copies with hidden digits
// (the ones the display rule hides: past the BIN, before the last four)
// changed. Each is evaluated under several FPE keys and several random
// streams, every pair. A position that changes with the key under any
// stream is keyed (a random digit that fixes a Luhn check can depend on a
// keyed length, and show it only under streams whose picks are not all
// alike); any other must hold, under each stream,
// the same character whatever the hidden digits are (a random character
// drawn from a class the data chose shows the class), and which
// positions are keyed must not change with them either.

// Keys and streams the oracle evaluates under: a keyed digit is the same
// under all the keys once in 10^15.
const (
	oracleKeys    = 16
	oracleStreams = 4
)

var oracleFF1 = func() []*fpe.FF1 {
	keys := make([]*fpe.FF1, oracleKeys)
	for i := range keys {
		k, err := fpe.NewFF1(bytes.Repeat([]byte{byte(i + 1)}, 32))
		if err != nil {
			panic(err)
		}
		keys[i] = k
	}
	return keys
}()

// constReader gives one byte forever: under stream k every random pick is
// the k-th character of its class, so random characters differ from one
// stream to the next, surely.
type constReader byte

func (c constReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

// observation is what the oracle sees of a template over one data value:
// per position, whether it is keyed, and the characters it holds under
// each stream. ok is false when an evaluation fails or the length
// changes with the key or stream (nothing lines up then).
type observation struct {
	keyed []bool
	byKey []map[rune]bool // per position, the characters under the keys in stream 0
	byRun [][]rune
	ok    bool
}

func observe(t *Template, vars map[string]any) observation {
	eval := func(key, stream int) ([]rune, bool) {
		ev := &evaluator{resolve: Vars(vars), work: maxWork, rand: newRandSource(constReader(stream)),
			opts: EvalOptions{FPE: oracleFF1[key]}}
		v, err := t.eval(ev)
		if err != nil {
			return nil, false
		}
		s, err := render(v)
		return []rune(s), err == nil
	}
	var o observation
	base, ok := eval(0, 0)
	if !ok {
		return o
	}
	o.keyed = make([]bool, len(base))
	o.byKey = make([]map[rune]bool, len(base))
	for p, c := range base {
		o.byKey[p] = map[rune]bool{c: true}
	}
	o.byRun = [][]rune{base}
	for st := range oracleStreams {
		run := base
		if st > 0 {
			if run, ok = eval(0, st); !ok || len(run) != len(base) {
				return o
			}
			o.byRun = append(o.byRun, run)
		}
		for k := 1; k < oracleKeys; k++ {
			r, ok := eval(k, st)
			if !ok || len(r) != len(base) {
				return o
			}
			for p := range r {
				o.keyed[p] = o.keyed[p] || r[p] != run[p]
				if st == 0 {
					o.byKey[p][r[p]] = true
				}
			}
		}
	}
	o.ok = true
	return o
}

// differs says how two observations differ in what is not keyed, or "".
func differs(a, b observation) string {
	if len(a.keyed) != len(b.keyed) {
		return "the length changes"
	}
	for p := range a.keyed {
		if a.keyed[p] != b.keyed[p] {
			// A keyed character that happens to be the same under every
			// key (its class, say, after an alias) is no leak; one that
			// never takes the other's constant character is: the data
			// chose whether it is keyed.
			fixed, keyed := a, b
			if a.keyed[p] {
				fixed, keyed = b, a
			}
			if !keyed.byKey[p][fixed.byRun[0][p]] {
				return fmt.Sprintf("position %d is keyed in one and not the other", p)
			}
			continue
		}
		if a.keyed[p] {
			continue
		}
		for st := range a.byRun {
			if a.byRun[st][p] != b.byRun[st][p] {
				return fmt.Sprintf("position %d changes", p)
			}
		}
	}
	return ""
}

// hiddenDigits are the digit indexes of a card number the display rule
// hides.
func hiddenDigits(number string) (int, int) {
	return CardBINLength(len(number)), len(number) - 4
}

// oracle reports a change of hidden digits that changes what t's result
// shows over card, or "" if none does. Each hidden digit is changed to
// each of tries; where that fails to evaluate (a card transformation
// wants the Luhn check to pass), the first other hidden digit is changed too.
func oracle(t *Template, card map[string]any, tries string) string {
	number := card["number"].(string)
	lo, hi := hiddenDigits(number)
	alts := func(i int, c rune) []rune { return []rune(tries) }
	return oracleOver(t, number, lo, hi, alts, func(n string) map[string]any {
		c := maps.Clone(card)
		c["number"] = n
		return map[string]any{"data": c}
	})
}

// oracleOver is the oracle over a text, hidden from lo to hi-1 (runes):
// each hidden character is changed to each of alts (same class: the shape
// is public), and vars places a variant in the variables.
func oracleOver(t *Template, text string, lo, hi int, alts func(i int, c rune) []rune, vars func(string) map[string]any) string {
	base := observe(t, vars(text))
	if !base.ok {
		return ""
	}
	r := []rune(text)
	for i := lo; i < hi; i++ {
		for _, d := range alts(i, r[i]) {
			if r[i] == d {
				continue
			}
			n := append([]rune{}, r...)
			n[i] = d
			o := observe(t, vars(string(n)))
			j := lo
			if j == i {
				j++
			}
			if !o.ok && j < hi {
				for _, d2 := range alts(j, r[j]) {
					m := append([]rune{}, n...)
					m[j] = d2
					if o = observe(t, vars(string(m))); o.ok {
						n = m
						break
					}
				}
			}
			if !o.ok {
				continue
			}
			if why := differs(base, o); why != "" {
				return fmt.Sprintf("%s when the text is %s", why, string(n))
			}
		}
	}
	return ""
}

// accepts reports whether the analysis holds t's result to the display
// rule over card: no hidden digit in its clear sources.
func accepts(t *Template, card map[string]any) bool {
	in := Label(map[string]any{"data": card})
	number := card["number"].(string)
	lo, hi := hiddenDigits(number)
	return t.Flow(in).Clear.Intersect(in.Chars("data.number", lo, hi)).Empty()
}

func testCard(number string) map[string]any {
	return map[string]any{"number": number, "expiration_month": json.Number("12"), "expiration_year": json.Number("2039")}
}

// attacks are ids and masks that showed hidden digits through filters
// composed around the ones that hide them.
var attacks = []string{
	`{{ data.number | replace: '5', '-' | fpe: 'digits' }}`,
	`{{ data.number | replace: '0', ' ' | fpe: 'alphanumeric' }}`,
	`{{ data.number | slice: 3, 13 | fpe: 'card_bin' }}`,
	`{{ data.number | replace: '1', '0' | replace: '3', '2' | replace: '5', '4' | replace: '7', '6' | replace: '9', '8' }}`,
	`{{ data.number | alias_preserve_length }}_{{ data.number }}`,
	`{{ data.number }}`,
	`{{ data.number | upcase }}`,
	`{{ data.number | to_base64 }}`,
	`{{ data.number | hmac: 'sha256', 'k' }}`,
	`{{ data.number | replace: '7', 'a' | alias_preserve_format }}`,
	`{{ data | stringify | alias_preserve_length: 0, 40 }}`,
}

// TestFlowOracleFindsTheAttacks: without the analysis (every expression
// accepted), the oracle alone finds each attack; with it, each is
// refused.
func TestFlowOracleFindsTheAttacks(t *testing.T) {
	// 5470000000000000 keeps the Luhn check from its fourth digit on, so
	// slice: 3, 13 | fpe: 'card_bin' evaluates over it.
	cards := []map[string]any{testCard("5105105105105100"), testCard("5470000000000000")}
	for _, src := range attacks {
		tmpl, err := Parse(src)
		if err != nil {
			t.Fatalf("Parse(%s): %v", src, err)
		}
		found := false
		for _, card := range cards {
			found = found || oracle(tmpl, card, "0123456789") != ""
			if accepts(tmpl, card) {
				t.Errorf("analysis accepts %s over %s", src, card["number"])
			}
		}
		if !found {
			t.Errorf("oracle(%s) found nothing, want a hidden digit shown", src)
		}
	}
}

// TestFlowAcceptsTheLegitimate: the defaults and documented ids and masks
// are accepted, and the oracle agrees.
func TestFlowAcceptsTheLegitimate(t *testing.T) {
	for _, src := range []string{
		`{{ data.number | reveal_last: 4 }}`,
		`{{ data.number | alias_card: true, true }}`,
		`{{ data.number | fpe: "card_bin_last4" }}`,
		`{{ data.number | fpe: "card_bin" }}`,
		`{{ data.number | fpe: "card" }}`,
		`{{ data.number | card_mask }}`,
		`{{ data.number | reveal: 6, 4 }}`,
		`{{ data.number | last4 }}/{{ data.number | card_bin }}`,
		`{{ data.number | reveal_last: 4 | replace: 'X', '*' }}`,
		`{{ data.number | fpe: 'digits' | slice: 0, 4 }}`,
		`{{ data.expiration_year | alias_preserve_length }}x`,
		`{{ data | card_exp }}`,
	} {
		for _, number := range []string{"4242424242424242", "378282246310005", "4000056655665556"} {
			tmpl, err := Parse(src)
			if err != nil {
				t.Fatalf("Parse(%s): %v", src, err)
			}
			card := testCard(number)
			if !accepts(tmpl, card) {
				t.Errorf("analysis refuses %s over %s", src, number)
			}
			if got := oracle(tmpl, card, "0123456789"); got != "" {
				t.Errorf("oracle(%s) over %s: %s", src, number, got)
			}
		}
	}
}

// fuzzFilters are the pieces FuzzFlow composes: every filter, with
// arguments chosen to move, hide, fold and encipher digits.
var fuzzFilters = []string{
	"last4", "reveal_last: 4", "reveal_last: 10", "reveal: 6, 4", "reveal: 8, 0", "reveal: 0, 9",
	"slice: 0, 6", "slice: 3, 13", "slice: 6, 6", "slice: -4, 4", "slice: 9", "slice: 2, 12",
	"pad_left: 20, '0'", "pad_right: 18, '-'", "stringify", "to_string", "json: '$'", "json: '$.number'",
	"upcase", "downcase", "replace: '5', '-'", "replace: '7', ' '", "replace: '1', '0'", "replace: '3', '2'",
	"replace: 'X', '*'", "replace: '4', 'a'", "replace: '9', '99'", "replace: '42', 'x'", "remove: '0'",
	"remove: '-'", "split: ''", "split: '4'", "card_bin", "card_mask", "to_number", "to_boolean",
	"hmac: 'sha256', 'k'", "to_base64", "to_base16",
	"alias_card", "alias_card: true, true", "alias_card: true, false, true", "alias_preserve_format",
	"alias_preserve_format: 0, 4", "alias_preserve_format: 10", "alias_preserve_length", "alias_preserve_length: 6, 4",
	"fpe: 'digits'", "fpe: 'alphanumeric'", "fpe: 'base36'", "fpe: 'card'", "fpe: 'card_bin'", "fpe: 'card_bin_last4'",
	"fpe: 'card_last4_luhn'", "fpe_tweaked: 'digits', 'data.expiration_year'",
}

var fuzzRoots = []string{"data.number", "data.number", "data", "data.expiration_month", "'4111-'"}

var fuzzNumbers = []string{"4242424242424242", "378282246310005", "5105105105105100", "4000056655665556",
	"6011111111111117", "4222222222222"}

// fuzzTemplate builds a template from b: one or two expressions of up to
// six filters, with text around them.
func fuzzTemplate(b []byte) (string, string) {
	next := func() int {
		if len(b) == 0 {
			return 0
		}
		c := int(b[0])
		b = b[1:]
		return c
	}
	number := fuzzNumbers[next()%len(fuzzNumbers)]
	var src bytes.Buffer
	for e := range 1 + next()%2 {
		if e > 0 {
			src.WriteString("_")
		}
		fmt.Fprintf(&src, "{{ %s", fuzzRoots[next()%len(fuzzRoots)])
		for range next() % 7 {
			fmt.Fprintf(&src, " | %s", fuzzFilters[next()%len(fuzzFilters)])
		}
		src.WriteString(" }}")
	}
	return src.String(), number
}

// FuzzFlow composes filters at random into ids and masks over a card and
// checks the analysis against the oracle: what the analysis accepts, no
// change of a hidden digit may change the clear part of.
func FuzzFlow(f *testing.F) {
	for i := range 64 {
		f.Add([]byte{byte(i), byte(i * 7), byte(i * 13), byte(i * 3), byte(i * 29), byte(i * 31), byte(i * 37)})
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		src, number := fuzzTemplate(b)
		tmpl, err := Parse(src)
		if err != nil {
			t.Fatalf("Parse(%s): %v", src, err)
		}
		card := testCard(number)
		if !accepts(tmpl, card) {
			return
		}
		tries := "38"
		if len(b) > 1 {
			tries = string([]byte{'0' + b[0]%10, '0' + b[1]%10})
		}
		if got := oracle(tmpl, card, tries); got != "" {
			t.Fatalf("the analysis accepts %s over %s, but %s", src, number, got)
		}
	})
}

// fuzzTexts are plain values whose every character is hidden (a token
// with no mask): only their shape may show.
var fuzzTexts = []string{"123-45-6789", "Ada L. Lovelace", "ab-cd-ef", "x<y & z", "Zoë 42"}

// sameClass are other characters of c's class (classOf), for the text
// oracle.
func sameClass(_ int, c rune) []rune {
	switch classOf(c) {
	case clDigit:
		return []rune("07")
	case clUpper:
		return []rune("AQ")
	case clLower:
		return []rune("aq")
	case clOther:
		return []rune(".<é")
	}
	return nil
}

// FuzzFlowText is FuzzFlow over plain texts with nothing allowed: what
// the analysis accepts shows nothing but the text's shape.
func FuzzFlowText(f *testing.F) {
	for i := range 32 {
		f.Add([]byte{byte(i), byte(i * 5), byte(i * 11), byte(i * 3), byte(i * 17), byte(i * 23)})
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		src, _ := fuzzTemplate(b)
		text := fuzzTexts[len(b)%len(fuzzTexts)]
		tmpl, err := Parse(src)
		if err != nil {
			t.Fatalf("Parse(%s): %v", src, err)
		}
		vars := func(s string) map[string]any {
			return map[string]any{"data": map[string]any{"number": s, "expiration_month": json.Number("12")}}
		}
		in := Label(vars(text))
		n := len([]rune(text))
		if !tmpl.Flow(in).Clear.Intersect(in.Chars("data.number", 0, n)).Empty() {
			return
		}
		if got := oracleOver(tmpl, text, 0, n, sameClass, vars); got != "" {
			t.Fatalf("the analysis accepts %s over %q, but %s", src, text, got)
		}
	})
}
