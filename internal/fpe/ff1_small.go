package fpe

import (
	"encoding/binary"
	"math/bits"
)

// forceBig makes every call take the math/big path; tests set it to
// check the two paths agree.
var forceBig = false

// smallModuli returns radix^u and radix^v when radix^v < 2^63: then every
// number of a round fits a uint64, b is at most 8 and d at most 12, and
// runSmall computes what run does without math/big.
func smallModuli(radix, u, v int) (modU, modV uint64, ok bool) {
	m := uint64(1)
	for i := range v {
		hi, lo := bits.Mul64(m, uint64(radix))
		if hi != 0 || lo >= 1<<63 {
			return 0, 0, false
		}
		m = lo
		if i == u-1 {
			modU = m
		}
	}
	if u == 0 {
		modU = 1
	}
	return modU, m, true
}

// runSmall is run for values whose halves fit a uint64.
func (f *FF1) runSmall(radix int, x []uint16, tweak []byte, enc bool, u, v int, modU, modV uint64) []uint16 {
	n, t := len(x), len(tweak)
	b := (bits.Len64(modV-1) + 7) / 8
	d := 4*((b+3)/4) + 4 // 8 or 12

	var p [16]byte
	p[0], p[1], p[2] = 1, 2, 1
	p[3], p[4], p[5] = byte(radix>>16), byte(radix>>8), byte(radix)
	p[6], p[7] = 10, byte(u)
	binary.BigEndian.PutUint32(p[8:], uint32(n))
	binary.BigEndian.PutUint32(p[12:], uint32(t))
	var p0 [16]byte
	f.block.Encrypt(p0[:], p[:])

	pad := ((-t-b-1)%16 + 16) % 16
	var qbuf [MaxTweak + 16 + 1 + 8]byte
	q := qbuf[:t+pad+1+b]
	copy(q, tweak)

	numSmall := func(x []uint16) uint64 {
		var a uint64
		for _, c := range x {
			a = a*uint64(radix) + uint64(c)
		}
		return a
	}
	a, bb := numSmall(x[:u]), numSmall(x[u:])
	if !enc {
		a, bb = bb, a
	}
	var r [16]byte
	for k := range 10 {
		i := k
		if !enc {
			i = 9 - k
		}
		q[t+pad] = byte(i)
		var nb [8]byte
		binary.BigEndian.PutUint64(nb[:], bb)
		copy(q[t+pad+1:], nb[8-b:])
		f.prf(r[:], p0, q)
		// y = NUM(S[:d]); d <= 12 <= 16, so S is R's first d bytes.
		var hi uint64
		if d == 12 {
			hi = uint64(binary.BigEndian.Uint32(r[:4]))
		}
		lo := binary.BigEndian.Uint64(r[d-8 : d])
		mod := modU
		if i%2 == 1 {
			mod = modV
		}
		y := bits.Rem64(hi, lo, mod)
		var c uint64
		if enc {
			c = a + y // both below mod < 2^63
			if c >= mod {
				c -= mod
			}
		} else if a >= y {
			c = a - y
		} else {
			c = a + mod - y
		}
		a, bb = bb, c
	}
	out := make([]uint16, n)
	strSmall := func(out []uint16, v uint64) {
		for i := len(out) - 1; i >= 0; i-- {
			out[i] = uint16(v % uint64(radix))
			v /= uint64(radix)
		}
	}
	if enc {
		strSmall(out[:u], a)
		strSmall(out[u:], bb)
	} else {
		strSmall(out[:u], bb)
		strSmall(out[u:], a)
	}
	return out
}
