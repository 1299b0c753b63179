package shamir

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"
)

// TestFieldAgainstTables checks mul and inv against the field's
// definition: every a*inv(a) is 1, mul is commutative and distributes.
func TestFieldAgainstTables(t *testing.T) {
	if mul(0x57, 0x83) != 0xc1 { // FIPS 197, 4.2
		t.Fatalf("0x57*0x83 = %#x, want 0xc1", mul(0x57, 0x83))
	}
	for a := 1; a < 256; a++ {
		if got := mul(byte(a), inv(byte(a))); got != 1 {
			t.Fatalf("%#x * inv = %#x", a, got)
		}
		for b := 0; b < 256; b += 7 {
			if mul(byte(a), byte(b)) != mul(byte(b), byte(a)) {
				t.Fatalf("mul not commutative at %d, %d", a, b)
			}
			if mul(byte(a), byte(b)^0x35) != mul(byte(a), byte(b))^mul(byte(a), 0x35) {
				t.Fatalf("mul not distributive at %d, %d", a, b)
			}
		}
	}
}

// TestAnyKOfNRecover combines every subset of k shares (and of more than
// k) of several splits, and gets the secret each time.
func TestAnyKOfNRecover(t *testing.T) {
	secret := make([]byte, 32)
	rand.Read(secret)
	for _, c := range []struct{ n, k int }{{2, 2}, {3, 2}, {5, 3}, {5, 5}, {7, 4}} {
		shares, err := Split(secret, c.n, c.k)
		if err != nil {
			t.Fatal(err)
		}
		for mask := 1; mask < 1<<c.n; mask++ {
			var subset []Share
			for i := range c.n {
				if mask&(1<<i) != 0 {
					subset = append(subset, shares[i])
				}
			}
			if len(subset) < 2 {
				continue
			}
			got, err := Combine(subset)
			if err != nil {
				t.Fatal(err)
			}
			if ok := bytes.Equal(got, secret); ok != (len(subset) >= c.k) {
				t.Fatalf("%d of %d (k %d), mask %b: recovered %v", len(subset), c.n, c.k, mask, ok)
			}
		}
	}
}

// TestFewerThanKRevealNothing: k-1 shares are consistent with every
// value of a secret byte (for each candidate, some k-th share makes it
// the secret), so they cannot tell the secret from any other; and their
// combination is not the secret.
func TestFewerThanKRevealNothing(t *testing.T) {
	secret := []byte{0x42}
	shares, err := Split(secret, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	known := shares[:2]
	reached := map[byte]bool{}
	for y := range 256 {
		got, err := Combine(append(append([]Share{}, known...), Share{shares[2][0], byte(y)}))
		if err != nil {
			t.Fatal(err)
		}
		reached[got[0]] = true
	}
	if len(reached) != 256 {
		t.Fatalf("2 of 3 shares leave %d candidate secrets, want all 256", len(reached))
	}
	big := make([]byte, 32)
	rand.Read(big)
	bigShares, _ := Split(big, 5, 3)
	if got2, _ := Combine(bigShares[:2]); bytes.Equal(got2, big) {
		t.Fatal("2 shares of a 3-of-5 split recovered the secret")
	}
}

// TestWrongShareDoesNotRecover: a share of another split, or one with a
// flipped bit, among k gives other bytes than the secret.
func TestWrongShareDoesNotRecover(t *testing.T) {
	secret := make([]byte, 32)
	rand.Read(secret)
	a, _ := Split(secret, 3, 2)
	b, _ := Split(secret, 3, 2)
	if got, _ := Combine([]Share{a[0], b[1]}); bytes.Equal(got, secret) {
		t.Fatal("shares of two splits recovered the secret")
	}
	flipped := bytes.Clone(a[1])
	flipped[5] ^= 1
	if got, _ := Combine([]Share{a[0], flipped}); bytes.Equal(got, secret) {
		t.Fatal("a flipped share recovered the secret")
	}
}

func TestSplitErrors(t *testing.T) {
	for _, c := range []struct {
		secret []byte
		n, k   int
	}{
		{nil, 3, 2}, {[]byte{1}, 256, 2}, {[]byte{1}, 1, 1}, {[]byte{1}, 3, 1}, {[]byte{1}, 3, 4}, {[]byte{1}, 0, 0},
	} {
		if _, err := Split(c.secret, c.n, c.k); !errors.Is(err, ErrInvalid) {
			t.Errorf("Split(%d bytes, n %d, k %d) = %v, want ErrInvalid", len(c.secret), c.n, c.k, err)
		}
	}
	if s, err := Split([]byte{1, 2}, 255, 255); err != nil || len(s) != 255 || s[254].X() != 255 {
		t.Fatalf("255 of 255: %v", err)
	}
}

func TestCombineErrors(t *testing.T) {
	s, _ := Split([]byte("a secret"), 3, 2)
	short := s[1][:4]
	for name, shares := range map[string][]Share{
		"none":        nil,
		"one":         {s[0]},
		"duplicate":   {s[0], s[0]},
		"same x":      {s[0], append(Share{s[0][0]}, s[1][1:]...)},
		"lengths":     {s[0], short},
		"x zero":      {s[0], append(Share{0}, s[1][1:]...)},
		"too short":   {s[0], {7}},
		"empty share": {s[0], {}},
	} {
		_, err := Combine(shares)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
		if err != nil && bytes.Contains([]byte(err.Error()), []byte("a secret")) {
			t.Errorf("%s: the error holds the secret", name)
		}
	}
}

// FuzzSplitCombine: for any secret, n and k, the first k shares and the
// last k shares recover the secret, and Combine never panics on what it
// is given.
func FuzzSplitCombine(f *testing.F) {
	f.Add([]byte("a root key of thirty-two bytes!!"), uint8(5), uint8(3))
	f.Add([]byte{0}, uint8(2), uint8(2))
	f.Fuzz(func(t *testing.T, secret []byte, n, k uint8) {
		shares, err := Split(secret, int(n), int(k))
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatal(err)
			}
			Combine([]Share{secret, Share{n, k}}) // must not panic
			return
		}
		for _, subset := range [][]Share{shares[:k], shares[int(n)-int(k):]} {
			got, err := Combine(subset)
			if err != nil || !bytes.Equal(got, secret) {
				t.Fatalf("n %d k %d: %x, %v", n, k, got, err)
			}
		}
	})
}
