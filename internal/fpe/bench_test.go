package fpe

import (
	"strings"
	"testing"
)

func BenchmarkFF1(b *testing.B) {
	f, _ := NewFF1(mustHex(b, nistSamples[8].key))
	digits, _ := NewAlphabet(Digits)
	alnum, _ := NewAlphabet(Alphanumeric)
	for _, c := range []struct {
		name string
		a    *Alphabet
		in   string
	}{
		{"digits16", digits, "4242424242424242"},
		{"digits64", digits, strings.Repeat("0123456789", 7)[:64]},
		{"alphanumeric32", alnum, strings.Repeat("aZ09", 8)},
		{"digits1024", digits, strings.Repeat("9", MaxLen)},
	} {
		b.Run(c.name, func(b *testing.B) {
			tw := []byte("tweak")
			for b.Loop() {
				if _, err := f.EncryptString(c.a, c.in, tw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("card_bin_last4", func(b *testing.B) {
		c := Card{KeepBIN: true, KeepLast4: true}
		for b.Loop() {
			if _, err := c.Encrypt(f, "4242424242424242", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("card", func(b *testing.B) {
		for b.Loop() {
			if _, err := (Card{}).Encrypt(f, "4242424242424242", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
