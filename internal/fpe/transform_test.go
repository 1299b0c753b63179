package fpe

import (
	"errors"
	"testing"
)

func TestNamed(t *testing.T) {
	for name, want := range map[string]Transformation{
		"card":                Card{},
		"card_bin_last4":      Card{KeepBIN: true, KeepLast4: true},
		"card_last4_luhn":     Card{KeepLast4: true, LuhnValid: true},
		"card_bin_last4_luhn": Card{KeepBIN: true, KeepLast4: true, LuhnValid: true},
	} {
		got, err := Named(name)
		if err != nil || got != want {
			t.Errorf("Named(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	for name, radix := range map[string]int{"digits": 10, "alphanumeric": 62, "base36": 36} {
		got, err := Named(name)
		if err != nil || got.(Format).Alphabet.Size() != radix {
			t.Errorf("Named(%q) = %v, %v", name, got, err)
		}
	}
	for _, name := range []string{"", "Digits", "card_last4_bin", "card_", "cards", "hex"} {
		if _, err := Named(name); !errors.Is(err, ErrTransformation) {
			t.Errorf("Named(%q): %v, want ErrTransformation", name, err)
		}
	}
	if _, err := Custom("0123456789-"); !errors.Is(err, ErrRadix) {
		t.Errorf("alphabet with a dash: %v", err)
	}
	if c, err := Custom("ACGT"); err != nil || c.(Format).Alphabet.Size() != 4 {
		t.Errorf("Custom(ACGT) = %v, %v", c, err)
	}
}
