package tokens

import (
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// RevealGate is asked, before a token's data is shown revealed to a
// caller (a get, a detokenization, a token of a list or search page),
// whether the reveal stands: the root's circuit breaker on reveals, which
// counts the distinct tokens each application reveals per window.
type RevealGate interface {
	// Reveal reports whether p may see token id revealed; false shows
	// it masked instead. An error (the budget refuses) fails the read.
	Reveal(t *unit.Tx, p *access.Principal, id string) (bool, error)
}

// gate is transform as s.Reveals leaves it for p's read of token id: a
// reveal the gate declines becomes a mask.
func (s *Service) gate(t *unit.Tx, p *access.Principal, id, transform string) (string, error) {
	if transform != access.TransformReveal || s.Reveals == nil {
		return transform, nil
	}
	ok, err := s.Reveals.Reveal(t, p, id)
	if err != nil {
		return "", err
	}
	if !ok {
		return access.TransformMask, nil
	}
	return transform, nil
}
