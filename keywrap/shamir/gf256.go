package shamir

// Arithmetic in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1 (AES's field), in
// constant time: no tables indexed by secret bytes, no branches on them,
// so that the time Split and Combine take says nothing about the secret.

// mul returns a*b, by shift-and-add over the 8 bits of b.
func mul(a, b byte) byte {
	var p byte
	for range 8 {
		p ^= a & -(b & 1)       // add a when b's low bit is set
		a = a<<1 ^ 0x1b&-(a>>7) // a*x, reduced
		b >>= 1
	}
	return p
}

// inv returns a^-1 (0 for 0) as a^254, since a^255 = 1.
func inv(a byte) byte {
	r := a
	for range 6 { // a^3, a^7, ..., a^127: square and multiply
		r = mul(mul(r, r), a)
	}
	return mul(r, r) // a^254
}

// div returns a/b; b is never 0 where Combine calls it.
func div(a, b byte) byte { return mul(a, inv(b)) }
