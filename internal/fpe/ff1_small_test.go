package fpe

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSmallPathMatchesBig: the uint64 path and the math/big path encipher
// every radix and length the uint64 path takes alike, both ways.
func TestSmallPathMatchesBig(t *testing.T) {
	f, _ := NewFF1(mustHex(t, nistSamples[8].key))
	rng := rand.New(rand.NewPCG(1, 2))
	for _, radix := range []int{2, 3, 7, 10, 16, 26, 36, 62, 255, 256, 1000, 65536} {
		for n := MinLen(radix); n <= 64; n++ {
			if _, _, ok := smallModuli(radix, n/2, n-n/2); !ok {
				break
			}
			x := make([]uint16, n)
			for i := range x {
				x[i] = uint16(rng.IntN(radix))
			}
			tweak := make([]byte, rng.IntN(40))
			for i := range tweak {
				tweak[i] = byte(rng.IntN(256))
			}
			small, err := f.Encrypt(radix, x, tweak)
			if err != nil {
				t.Fatal(err)
			}
			forceBig = true
			big, _ := f.Encrypt(radix, x, tweak)
			bigDec, _ := f.Decrypt(radix, big, tweak)
			forceBig = false
			smallDec, _ := f.Decrypt(radix, small, tweak)
			if !slices.Equal(small, big) || !slices.Equal(smallDec, x) || !slices.Equal(bigDec, x) {
				t.Fatalf("radix %d length %d: small %v big %v", radix, n, small, big)
			}
		}
	}
}
