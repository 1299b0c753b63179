package tokens

import (
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The reads with their audit lines and counts, and a delete by id: what
// the Vault's token methods run once they have authorized the key
// (GetToken, DeleteToken, Detokenize, the pages of ListTokens and
// SearchTokens).

// The token operations Service.Count counts besides those of a create or
// update.
const (
	CountDeleted      = "deleted"
	CountDetokenized  = "detokenized"
	msgRead           = "Token read"
	msgDeletedByOwner = "Token deleted"
)

// Get returns the live token id as p's token:read shapes it, its
// fingerprint only where that access reveals the data, and logs, tells
// of and counts the read (channel get).
//
// Returns NotFound for a token that does not exist, has expired or is
// another tenant's, PermissionDenied without token:read on its
// containers.
func (s *Service) Get(t *unit.Tx, p *access.Principal, id string) (*Token, error) {
	rec, transform, err := s.Must(t, p, id, access.PermTokenRead)
	if err != nil {
		return nil, err
	}
	if transform, err = s.gate(t, p, id, transform); err != nil {
		return nil, err
	}
	s.decoyRead(t, p, rec)
	out := TokenOf(rec, transform)
	if transform != access.TransformReveal {
		out.Fingerprint = "" // equality with the data: only for who sees it
	}
	s.count(t, CountRead)
	if err := EmitReadRecord(t, p, rec); err != nil {
		return nil, err
	}
	return out, LogRead(t, p, rec.Type, rec.ID, msgRead, transform, unit.ChannelGet)
}

// DeleteID deletes the live token id that p, holding token:delete on its
// containers, deletes (Delete), and counts it.
//
// Returns NotFound for a token that does not exist, has expired or is
// another tenant's, PermissionDenied without token:delete on its
// containers.
func (s *Service) DeleteID(t *unit.Tx, p *access.Principal, id string) error {
	rec, _, err := s.Must(t, p, id, access.PermTokenDelete)
	if err != nil {
		return err
	}
	s.count(t, CountDeleted)
	return s.Delete(t, p.Actor(), rec, msgDeletedByOwner)
}

// DetokenizeLogged is Detokenize logging each distinct token once
// (LogRead with msg, its transform and channel) and counting it.
func (s *Service) DetokenizeLogged(t *unit.Tx, p *access.Principal, perm string, doc any, msg, channel string) (any, error) {
	return s.Detokenize(t, p, perm, doc, func(rec *Record, transform string) error {
		s.count(t, CountDetokenized)
		return LogRead(t, p, rec.Type, rec.ID, msg, transform, channel)
	})
}

// LogListed logs the read of every token of a page that carries data: a
// list or a search shows data as Get does, and is audited as it is, with
// the transform of p's perm (redact where it reaches no token) and the
// channel; each is told of (EmitRead) and counted. A reveal the circuit
// breaker declines (Service.Reveals) is shown masked in toks, and a
// decoy the page shows is told to it.
func (s *Service) LogListed(t *unit.Tx, p *access.Principal, perm string, toks []Token, msg, channel string) error {
	for i := range toks {
		tok := &toks[i]
		if tok.Data == nil {
			continue // redacted: nothing of the token's data was read
		}
		transform, ok := p.Decide(perm, access.TokenScope{ID: tok.ID, Containers: tok.Containers})
		if !ok {
			transform = access.TransformRedact
		}
		shown, err := s.gate(t, p, tok.ID, transform)
		if err != nil {
			return err
		}
		if shown != transform {
			// Past the reveal budget: the page shows it masked.
			transform, tok.Data, tok.Fingerprint = shown, tok.Mask, ""
			if tok.Data == nil {
				continue
			}
		}
		if decoy, freeze := listedDecoy(t, tok.ID); decoy && s.Reveals != nil {
			s.Reveals.DecoyRead(t, p, tok.ID, freeze)
		}
		if err := LogRead(t, p, tok.Type, tok.ID, msg, transform, channel); err != nil {
			return err
		}
		if err := EmitRead(t, p, tok); err != nil {
			return err
		}
		s.count(t, CountRead)
	}
	return nil
}
