package fpe

import (
	"errors"
	"strings"
	"testing"
)

func TestCard(t *testing.T) {
	f, _ := NewFF1(mustHex(t, nistSamples[8].key))
	for _, c := range []struct {
		name string
		card Card
		in   string
	}{
		{"all digits", Card{}, "4242424242424242"},
		{"bin and last4", Card{KeepBIN: true, KeepLast4: true}, "4242 4242 4242 4242"},
		{"bin", Card{KeepBIN: true}, "5555-5555-5555-4444"},
		{"last4 luhn valid", Card{KeepLast4: true, LuhnValid: true}, "378282246310005"},
		{"luhn valid 19", Card{LuhnValid: true}, "6011000990139424000"[:16]},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			if luhnSum(cardDigitsOf(in)) != 0 {
				t.Fatalf("test input %q is not Luhn-valid", in)
			}
			ct, err := c.card.Encrypt(f, in, []byte("tw"))
			if err != nil {
				t.Fatal(err)
			}
			if len(ct) != len(in) || ct == in {
				t.Fatalf("encrypt %q = %q", in, ct)
			}
			for i := range in {
				if (in[i] == ' ' || in[i] == '-') != (ct[i] == ' ' || ct[i] == '-') || (in[i] == ' ' || in[i] == '-') && in[i] != ct[i] {
					t.Fatalf("separators moved: %q -> %q", in, ct)
				}
			}
			d, e := cardDigitsOf(in), cardDigitsOf(ct)
			if c.card.KeepBIN && string(rune16(d[:6])) != string(rune16(e[:6])) {
				t.Errorf("BIN not kept: %q -> %q", in, ct)
			}
			if c.card.KeepLast4 && string(rune16(d[len(d)-4:])) != string(rune16(e[len(e)-4:])) {
				t.Errorf("last 4 not kept: %q -> %q", in, ct)
			}
			if valid := luhnSum(e) == 0; valid != c.card.LuhnValid {
				t.Errorf("token %q Luhn-valid = %v, want %v", ct, valid, c.card.LuhnValid)
			}
			again, _ := c.card.Encrypt(f, in, []byte("tw"))
			if again != ct {
				t.Errorf("not deterministic: %q then %q", ct, again)
			}
			pt, err := c.card.Decrypt(f, ct, []byte("tw"))
			if err != nil || pt != in {
				t.Fatalf("decrypt = %q, %v; want %q", pt, err, in)
			}
		})
	}
}

func TestCardRefuses(t *testing.T) {
	f, _ := NewFF1(make([]byte, 32))
	for _, c := range []struct {
		name string
		card Card
		in   string
		want error
	}{
		{"letters", Card{}, "4242x42424242424", ErrCard},
		{"fails luhn", Card{}, "4242424242424241", ErrCard},
		{"11 digits", Card{}, "42424242426", ErrCard},
		{"20 digits", Card{}, "42424242424242424242", ErrCard},
		{"12 digits keeping both", Card{KeepBIN: true, KeepLast4: true}, "424242424242", ErrTooShort},
		{"long tweak", Card{}, "4242424242424242", ErrTweak},
	} {
		t.Run(c.name, func(t *testing.T) {
			tw := []byte("t")
			if c.want == ErrTweak {
				tw = make([]byte, MaxTweak)
			}
			_, err := c.card.Encrypt(f, c.in, tw)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if strings.Contains(err.Error(), c.in) {
				t.Errorf("error %q quotes the value", err)
			}
		})
	}
	// A Luhn-valid number is not a token of the default (Luhn-failing)
	// transformation.
	if _, err := (Card{}).Decrypt(f, "4242424242424242", nil); !errors.Is(err, ErrCard) {
		t.Errorf("decrypt of a valid number: %v, want ErrCard", err)
	}
}

func TestFormatKeepsSeparators(t *testing.T) {
	f, _ := NewFF1(make([]byte, 32))
	digits, _ := NewAlphabet(Digits)
	fm := Format{Alphabet: digits}
	ct, err := fm.Encrypt(f, "123-45-6789", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ct[3] != '-' || ct[6] != '-' || len(ct) != 11 || ct == "123-45-6789" {
		t.Fatalf("encrypt = %q", ct)
	}
	pt, err := fm.Decrypt(f, ct, nil)
	if err != nil || pt != "123-45-6789" {
		t.Fatalf("decrypt = %q, %v", pt, err)
	}
	if _, err := fm.Encrypt(f, "123.45.6789", nil); !errors.Is(err, ErrNumeral) {
		t.Errorf("dots: %v, want ErrNumeral", err)
	}
	if _, err := fm.Encrypt(f, "12-34-5", nil); !errors.Is(err, ErrTooShort) {
		t.Errorf("5 digits: %v, want ErrTooShort", err)
	}
}

func cardDigitsOf(s string) []uint16 {
	var d []uint16
	for i := range len(s) {
		if s[i] >= '0' && s[i] <= '9' {
			d = append(d, uint16(s[i]-'0'))
		}
	}
	return d
}

func rune16(d []uint16) []rune {
	r := make([]rune, len(d))
	for i, x := range d {
		r[i] = rune('0' + x)
	}
	return r
}
