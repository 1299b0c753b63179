package shamir

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
)

// ErrInvalid is the error of arguments Split or Combine cannot take.
var ErrInvalid = errors.New("shamir: invalid arguments")

// MaxShares is the most shares a secret can be split into: x coordinates
// are the nonzero bytes.
const MaxShares = 255

// A Share is one point of the polynomials: Share[0] is its x coordinate
// (1..255), the rest the y of each byte of the secret.
type Share []byte

// X returns the share's x coordinate (0 for an empty share).
func (s Share) X() byte {
	if len(s) == 0 {
		return 0
	}
	return s[0]
}

// Split splits secret into n shares (x = 1..n), any k of which Combine
// back into secret. It reads its randomness from crypto/rand.
//
// Returns ErrInvalid (wrapped) when secret is empty, n > 255 or k is not
// within 2..n.
func Split(secret []byte, n, k int) ([]Share, error) {
	return split(rand.Reader, secret, n, k)
}

func split(random io.Reader, secret []byte, n, k int) ([]Share, error) {
	switch {
	case len(secret) == 0:
		return nil, fmt.Errorf("%w: an empty secret", ErrInvalid)
	case n < 2 || n > MaxShares:
		return nil, fmt.Errorf("%w: n must be within 2..%d, not %d", ErrInvalid, MaxShares, n)
	case k < 2 || k > n:
		return nil, fmt.Errorf("%w: k must be within 2..n (%d), not %d", ErrInvalid, n, k)
	}
	shares := make([]Share, n)
	for i := range shares {
		shares[i] = make(Share, 1+len(secret))
		shares[i][0] = byte(i + 1)
	}
	coeffs := make([]byte, k) // coeffs[0] is the secret's byte
	defer clear(coeffs)
	for j, b := range secret {
		coeffs[0] = b
		if _, err := io.ReadFull(random, coeffs[1:]); err != nil {
			return nil, fmt.Errorf("shamir: randomness: %w", err)
		}
		for _, s := range shares {
			s[1+j] = eval(coeffs, s[0])
		}
	}
	return shares, nil
}

// Combine returns the secret of shares, by Lagrange interpolation at x =
// 0. Given k shares of a split of threshold k (or more), it returns the
// secret; given fewer, or a wrong one among them, it returns other bytes
// (see the package's doc: check the result).
//
// Returns ErrInvalid (wrapped) when there are fewer than 2 shares, more
// than 255, shares of different or no length, a share of x = 0, or two
// shares of the same x.
func Combine(shares []Share) ([]byte, error) {
	if len(shares) < 2 || len(shares) > MaxShares {
		return nil, fmt.Errorf("%w: Combine needs 2..%d shares, not %d", ErrInvalid, MaxShares, len(shares))
	}
	size := len(shares[0])
	var seen [256]bool
	for i, s := range shares {
		switch {
		case len(s) < 2:
			return nil, fmt.Errorf("%w: share %d is too short", ErrInvalid, i+1)
		case len(s) != size:
			return nil, fmt.Errorf("%w: shares of different lengths (%d and %d bytes)", ErrInvalid, size, len(s))
		case s[0] == 0:
			return nil, fmt.Errorf("%w: share %d has x = 0", ErrInvalid, i+1)
		case seen[s[0]]:
			return nil, fmt.Errorf("%w: two shares of x = %d", ErrInvalid, s[0])
		}
		seen[s[0]] = true
	}
	secret := make([]byte, size-1)
	for i, si := range shares {
		// The Lagrange basis polynomial of share i, at 0:
		// prod over j != i of x_j / (x_j - x_i); minus is plus in GF(2^8).
		basis := byte(1)
		for j, sj := range shares {
			if i != j {
				basis = mul(basis, div(sj[0], sj[0]^si[0]))
			}
		}
		for b := range secret {
			secret[b] ^= mul(si[1+b], basis)
		}
	}
	return secret, nil
}

// eval returns the polynomial of coefficients coeffs (lowest degree
// first) at x, by Horner's rule.
func eval(coeffs []byte, x byte) byte {
	var y byte
	for i := len(coeffs) - 1; i >= 0; i-- {
		y = mul(y, x) ^ coeffs[i]
	}
	return y
}
