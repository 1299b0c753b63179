package fpe

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"math/big"
)

// Domain limits. The standard (SP 800-38G Rev. 1, 5.2) requires
// radix^minlen >= 1,000,000 and 2 <= minlen <= maxlen < 2^32; this
// package's maxlen and tweak bound are its own, kept small so one call's
// work is bounded (every round's cost grows with the square of the length).
const (
	// MinDomain is the least number of values a numeral string of a given
	// radix and length may take (radix^len).
	MinDomain = 1_000_000
	// MaxLen is the most numerals one call takes.
	MaxLen = 1024
	// MaxTweak is the most bytes a tweak may have.
	MaxTweak = 256
	// MaxRadix is the largest radix (alphabet size) this package accepts;
	// the standard allows up to 2^16.
	MaxRadix = 1 << 16
)

// FF1 is the FF1 mode of SP 800-38G over AES. It is safe for concurrent
// use. Keys of 16, 24 and 32 bytes select AES-128, -192 and -256; the
// vault uses 32-byte keys only, the shorter ones exist for the standard's
// sample vectors.
type FF1 struct {
	block cipher.Block
}

// String keeps the key schedule out of any log line that prints an FF1.
func (f *FF1) String() string { return "fpe.FF1{...}" }

// NewFF1 returns FF1 under key. It returns ErrKey for a key that is not
// 16, 24 or 32 bytes.
func NewFF1(key []byte) (*FF1, error) {
	switch len(key) {
	case 16, 24, 32:
	default:
		return nil, fmt.Errorf("%w: %d bytes, want 16, 24 or 32", ErrKey, len(key))
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	return &FF1{block: b}, nil
}

// CheckDomain reports whether n numerals of radix radix and a tweak of
// tweakLen bytes are within the standard's and this package's limits:
// ErrRadix, ErrTooShort, ErrTooLong or ErrTweak.
func CheckDomain(radix, n, tweakLen int) error {
	if radix < 2 || radix > MaxRadix {
		return fmt.Errorf("%w: radix %d is not within 2 to %d", ErrRadix, radix, MaxRadix)
	}
	if n > MaxLen {
		return fmt.Errorf("%w: %d characters, at most %d", ErrTooLong, n, MaxLen)
	}
	if n < MinLen(radix) {
		return fmt.Errorf("%w: %d characters of radix %d, at least %d (radix^length must reach %d)",
			ErrTooShort, n, radix, MinLen(radix), MinDomain)
	}
	if tweakLen > MaxTweak {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrTweak, tweakLen, MaxTweak)
	}
	return nil
}

// MinLen is the shortest numeral string of radix radix that FF1 accepts:
// the least length with radix^length >= MinDomain, and at least 2.
func MinLen(radix int) int {
	if radix < 2 {
		return MaxLen + 1
	}
	n, d := 0, 1
	for d < MinDomain {
		d *= radix
		n++
	}
	return max(n, 2)
}

// Encrypt enciphers the numeral string x (each numeral < radix) under
// tweak (Algorithm 7 of SP 800-38G). The result has x's length. Errors:
// ErrRadix, ErrTooShort, ErrTooLong, ErrTweak, and ErrNumeral for a
// numeral not below radix.
func (f *FF1) Encrypt(radix int, x []uint16, tweak []byte) ([]uint16, error) {
	return f.run(radix, x, tweak, true)
}

// Decrypt deciphers what Encrypt enciphered (Algorithm 8), with the same
// errors.
func (f *FF1) Decrypt(radix int, x []uint16, tweak []byte) ([]uint16, error) {
	return f.run(radix, x, tweak, false)
}

func (f *FF1) run(radix int, x []uint16, tweak []byte, enc bool) ([]uint16, error) {
	n := len(x)
	if err := CheckDomain(radix, n, len(tweak)); err != nil {
		return nil, err
	}
	for i, c := range x {
		if int(c) >= radix {
			return nil, fmt.Errorf("%w: numeral at position %d is not below radix %d", ErrNumeral, i+1, radix)
		}
	}
	u := n / 2
	v := n - u
	if modU, modV, ok := smallModuli(radix, u, v); ok && !forceBig {
		return f.runSmall(radix, x, tweak, enc, u, v, modU, modV), nil
	}
	r := big.NewInt(int64(radix))
	// radix^u and radix^v, the moduli of the even and odd rounds.
	modU := new(big.Int).Exp(r, big.NewInt(int64(u)), nil)
	modV := modU
	if v != u {
		modV = new(big.Int).Mul(modU, r)
	}
	// b = ceil(ceil(v*log2(radix))/8): the bytes of the largest v-numeral
	// value, radix^v - 1.
	b := (new(big.Int).Sub(modV, big.NewInt(1)).BitLen() + 7) / 8
	d := 4*((b+3)/4) + 4
	t := len(tweak)

	// P, the fixed first block.
	var p [16]byte
	p[0], p[1], p[2] = 1, 2, 1
	p[3], p[4], p[5] = byte(radix>>16), byte(radix>>8), byte(radix)
	p[6], p[7] = 10, byte(u)
	binary.BigEndian.PutUint32(p[8:], uint32(n))
	binary.BigEndian.PutUint32(p[12:], uint32(t))
	// CBC-MAC state after P, shared by every round.
	var p0 [16]byte
	f.block.Encrypt(p0[:], p[:])

	// Q = T || 0^((-t-b-1) mod 16) || [i]^1 || [NUM(B)]^b.
	pad := ((-t-b-1)%16 + 16) % 16
	q := make([]byte, t+pad+1+b)
	copy(q, tweak)
	s := make([]byte, ((d+15)/16)*16)
	numBuf := make([]byte, b)

	a := num(x[:u], r)
	bb := num(x[u:], r)
	if !enc {
		a, bb = bb, a // decryption walks the rounds backwards with A and B swapped
	}
	y := new(big.Int)
	for k := range 10 {
		i := k
		if !enc {
			i = 9 - k
		}
		q[t+pad] = byte(i)
		// The round function reads B when encrypting and A when decrypting;
		// with the swap above both are in bb.
		bb.FillBytes(numBuf)
		copy(q[t+pad+1:], numBuf)
		f.prf(s[:16], p0, q)
		for j := 1; j*16 < d; j++ {
			var blk [16]byte
			for l := range 16 {
				blk[l] = s[l]
			}
			binary.BigEndian.PutUint64(blk[8:], binary.BigEndian.Uint64(blk[8:])^uint64(j))
			f.block.Encrypt(s[j*16:(j+1)*16], blk[:])
		}
		y.SetBytes(s[:d])
		mod := modU
		if i%2 == 1 {
			mod = modV
		}
		c := new(big.Int)
		if enc {
			c.Add(a, y)
		} else {
			c.Sub(a, y)
		}
		c.Mod(c, mod)
		a, bb = bb, c
	}
	out := make([]uint16, n)
	if enc {
		str(out[:u], a, r)
		str(out[u:], bb, r)
	} else {
		str(out[:u], bb, r)
		str(out[u:], a, r)
	}
	return out, nil
}

// prf is the CBC-MAC of P || Q (Algorithm 6), started from p0, the
// encryption of P. len(q) is a multiple of 16.
func (f *FF1) prf(dst []byte, p0 [16]byte, q []byte) {
	st := p0
	for off := 0; off < len(q); off += 16 {
		for l := range 16 {
			st[l] ^= q[off+l]
		}
		f.block.Encrypt(st[:], st[:])
	}
	copy(dst, st[:])
}

// num is NUM_radix(x): x's numerals read as a number, most significant
// first.
func num(x []uint16, r *big.Int) *big.Int {
	n := new(big.Int)
	// Fold numerals into a word first: a big.Int step per word, not per
	// numeral.
	radix := r.Uint64()
	var acc, scale uint64 = 0, 1
	for _, c := range x {
		if scale > (1<<63)/radix {
			n.Mul(n, new(big.Int).SetUint64(scale))
			n.Add(n, new(big.Int).SetUint64(acc))
			acc, scale = 0, 1
		}
		acc = acc*radix + uint64(c)
		scale *= radix
	}
	n.Mul(n, new(big.Int).SetUint64(scale))
	n.Add(n, new(big.Int).SetUint64(acc))
	return n
}

// str is STR^m_radix(x): x written as len(out) numerals, most significant
// first. x < radix^len(out).
func str(out []uint16, x *big.Int, r *big.Int) {
	x = new(big.Int).Set(x)
	m := new(big.Int)
	for i := len(out) - 1; i >= 0; i-- {
		x.QuoRem(x, r, m)
		out[i] = uint16(m.Uint64())
	}
}
