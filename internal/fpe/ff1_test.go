package fpe

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The nine FF1 samples of NIST's "FF1 examples" (FF1samples.pdf, the
// example values published with SP 800-38G): AES-128, -192 and -256, each
// with radix 10 and no tweak, radix 10 with a 10-byte tweak, and radix 36
// with an 11-byte tweak.
type nistSample struct {
	name, key, tweak string
	radix            int
	pt, ct           string
}

var nistSamples = []nistSample{
	{"sample 1 AES-128", "2B7E151628AED2A6ABF7158809CF4F3C", "", 10, "0123456789", "2433477484"},
	{"sample 2 AES-128", "2B7E151628AED2A6ABF7158809CF4F3C", "39383736353433323130", 10, "0123456789", "6124200773"},
	{"sample 3 AES-128", "2B7E151628AED2A6ABF7158809CF4F3C", "3737373770717273373737", 36, "0123456789abcdefghi", "a9tv40mll9kdu509eum"},
	{"sample 4 AES-192", "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F", "", 10, "0123456789", "2830668132"},
	{"sample 5 AES-192", "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F", "39383736353433323130", 10, "0123456789", "2496655549"},
	{"sample 6 AES-192", "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F", "3737373770717273373737", 36, "0123456789abcdefghi", "xbj3kv35jrawxv32ysr"},
	{"sample 7 AES-256", "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F7F036D6F04FC6A94", "", 10, "0123456789", "6657667009"},
	{"sample 8 AES-256", "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F7F036D6F04FC6A94", "39383736353433323130", 10, "0123456789", "1001623463"},
	{"sample 9 AES-256", "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F7F036D6F04FC6A94", "3737373770717273373737", 36, "0123456789abcdefghi", "xs8a0azh2avyalyzuwd"},
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNISTSamples runs the samples down both paths: uint64 (all of them
// fit) and math/big.
func TestNISTSamples(t *testing.T) {
	defer func() { forceBig = false }()
	for _, s := range nistSamples {
		for _, big := range []bool{false, true} {
			forceBig = big
			testNISTSample(t, s)
		}
	}
}

func testNISTSample(t *testing.T, s nistSample) {
	t.Run(fmt.Sprintf("%s big=%v", s.name, forceBig), func(t *testing.T) {
		f, err := NewFF1(mustHex(t, s.key))
		if err != nil {
			t.Fatal(err)
		}
		a, err := Radix(s.radix)
		if err != nil {
			t.Fatal(err)
		}
		tw := mustHex(t, s.tweak)
		ct, err := f.EncryptString(a, s.pt, tw)
		if err != nil {
			t.Fatal(err)
		}
		if ct != s.ct {
			t.Errorf("encrypt = %q, want %q", ct, s.ct)
		}
		pt, err := f.DecryptString(a, s.ct, tw)
		if err != nil {
			t.Fatal(err)
		}
		if pt != s.pt {
			t.Errorf("decrypt = %q, want %q", pt, s.pt)
		}
	})
}

func TestDomainRules(t *testing.T) {
	f, err := NewFF1(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	digits, _ := NewAlphabet(Digits)
	bin, _ := Radix(2)
	for _, c := range []struct {
		name  string
		a     *Alphabet
		in    string
		tweak []byte
		want  error
	}{
		{"digits 5 too short", digits, "12345", nil, ErrTooShort},
		{"digits 6 ok", digits, "123456", nil, nil},
		{"binary 19 too short", bin, strings.Repeat("1", 19), nil, ErrTooShort},
		{"binary 20 ok", bin, strings.Repeat("1", 20), nil, nil},
		{"too long", digits, strings.Repeat("7", MaxLen+1), nil, ErrTooLong},
		{"longest", digits, strings.Repeat("7", MaxLen), nil, nil},
		{"letter in digits", digits, "12345a", nil, ErrNumeral},
		{"tweak too long", digits, "1234567", make([]byte, MaxTweak+1), ErrTweak},
		{"longest tweak", digits, "1234567", make([]byte, MaxTweak), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ct, err := f.EncryptString(c.a, c.in, c.tweak)
			if !errors.Is(err, c.want) {
				t.Fatalf("encrypt err = %v, want %v", err, c.want)
			}
			if err != nil {
				if strings.Contains(err.Error(), c.in) {
					t.Errorf("error %q quotes the value", err)
				}
				return
			}
			pt, err := f.DecryptString(c.a, ct, c.tweak)
			if err != nil || pt != c.in {
				t.Fatalf("round trip = %q, %v", pt, err)
			}
		})
	}
	if _, err := NewFF1(make([]byte, 20)); !errors.Is(err, ErrKey) {
		t.Errorf("20-byte key: %v, want ErrKey", err)
	}
	for _, s := range []string{"", "a", "aa", "abca", "\xff\xfe"} {
		if _, err := NewAlphabet(s); !errors.Is(err, ErrRadix) {
			t.Errorf("alphabet %q: %v, want ErrRadix", s, err)
		}
	}
	for _, r := range []int{0, 1, 37} {
		if _, err := Radix(r); !errors.Is(err, ErrRadix) {
			t.Errorf("radix %d: %v, want ErrRadix", r, err)
		}
	}
	if _, err := f.Encrypt(10, []uint16{1, 2, 3, 4, 5, 10}, nil); !errors.Is(err, ErrNumeral) {
		t.Errorf("numeral 10 of radix 10: %v, want ErrNumeral", err)
	}
	if _, err := f.Encrypt(1, make([]uint16, 30), nil); !errors.Is(err, ErrRadix) {
		t.Errorf("radix 1: %v, want ErrRadix", err)
	}
}

// TestUnicodeAlphabet checks an alphabet beyond ASCII and of odd size,
// and lengths of both parities.
func TestUnicodeAlphabet(t *testing.T) {
	f, _ := NewFF1(make([]byte, 32))
	a, err := NewAlphabet("αβγδεζηθικλμνξοπρστυφχψω0123456789")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"αβγδ", "αβγδε", "ω9ω9ω9ω9ω9ω9ω9"} {
		ct, err := f.EncryptString(a, in, []byte("t"))
		if err != nil {
			t.Fatal(err)
		}
		if len([]rune(ct)) != len([]rune(in)) || ct == in {
			t.Errorf("encrypt %q = %q", in, ct)
		}
		pt, err := f.DecryptString(a, ct, []byte("t"))
		if err != nil || pt != in {
			t.Errorf("round trip %q = %q, %v", in, pt, err)
		}
	}
}
