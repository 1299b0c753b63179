package tokens

import (
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
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
	// DecoyRead is told that p read decoy id (any transform): the read
	// answers as any other, and the anomaly is reported, freezing p's
	// application when freeze is set.
	DecoyRead(t *unit.Tx, p *access.Principal, id string, freeze bool)
}

// DecoyIndex is the index of tenant tid's decoys: an entry per decoy
// token, written and deleted with it (Indexes).
func DecoyIndex(tid string) barrier.Prefix { return barrier.Tenant(tid).Index("decoy") }

// decoyRead tells s.Reveals that p read rec, if rec is a decoy.
func (s *Service) decoyRead(t *unit.Tx, p *access.Principal, rec *Record) {
	if rec.Decoy && s.Reveals != nil {
		s.Reveals.DecoyRead(t, p, rec.ID, rec.DecoyFreeze)
	}
}

// listedDecoys holds the decoys a list or search page of a transaction
// shows, by id (true: freeze), noted by the listing (NoteListed) for
// LogListed, which sees the page's tokens and not their records.
var listedDecoys unit.Local[map[string]bool]

// NoteListed notes that a page of t shows rec (the listing calls it for
// each token of a page), so that LogListed tells of a decoy's read.
func NoteListed(t *unit.Tx, rec *Record) {
	if !rec.Decoy {
		return
	}
	m := listedDecoys.Of(t)
	if *m == nil {
		*m = map[string]bool{}
	}
	(*m)[rec.ID] = rec.DecoyFreeze
}

// listedDecoy reports whether a page of t showed decoy id, and its freeze.
func listedDecoy(t *unit.Tx, id string) (decoy, freeze bool) {
	m, ok := listedDecoys.Peek(t)
	if !ok {
		return false, false
	}
	freeze, decoy = (*m)[id]
	return decoy, freeze
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
