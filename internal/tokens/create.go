package tokens

import (
	"slices"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The messages of a create's lines (tests and the access history compare
// them).
const (
	msgCreated      = "Token created"
	msgExpired      = "Token expired"
	msgDeduplicated = "Token read (deduplicated create)"
)

// CreateTree creates the tokens of a tree PrepareTree made, in the stable
// order of Walk so that ids are assigned deterministically: each plain
// value becomes its token's id, each token request its *Token.
func (s *Service) CreateTree(t *unit.Tx, p *access.Principal, tree any) (any, error) {
	return Walk(tree, "", func(v any, _ string) (any, bool, error) {
		pt, ok := v.(*Prepared)
		if !ok {
			return nil, false, nil
		}
		tok, err := s.Create(t, p, pt)
		if err != nil || !pt.Plain {
			return tok, true, err
		}
		return tok.ID, true, nil
	})
}

// Create stores a prepared token with its indexes and log line, or, for a
// deduplicating request, returns (and logs the read of) the existing
// token it matches (see findDuplicate). A conversion (pt.Intent) converts
// its intent (convert.go). p must hold token:create; Create checks it on
// the token's containers and id.
//
// Returns PermissionDenied without token:create there, Conflict for a
// live token of the literal id or an alias with no free draw, and what
// Convert returns for a conversion.
func (s *Service) Create(t *unit.Tx, p *access.Principal, pt *Prepared) (*Token, error) {
	if pt.Intent != nil {
		return s.convert(t, p, pt.Intent)
	}
	tid := p.TenantID
	if pt.IDTmpl != nil {
		id, err := s.Aliases.DeriveFPEID(t, p, pt.Containers, pt.IDTmpl, pt.IDVars, pt.IDPath)
		if err != nil {
			return nil, err
		}
		pt.ID = id
	}
	id := pt.ID
	var expiredAlias *Record // an expired token holding the alias drawn
	var aliasTaken error     // no free alias: a Conflict unless a duplicate wins
	switch {
	case pt.Alias != nil:
		var err error
		id, err = pt.Alias.Free(s.Rand, func(id string) (bool, error) {
			old, err := s.Load(t, tid, id, true)
			if err != nil || old == nil {
				return false, err
			}
			if old.Expired(t.Now) {
				expiredAlias = old // replaced by the new token
				return false, nil
			}
			return true, nil
		})
		if err != nil && (unit.ErrorKind(err) != unit.Conflict || !pt.Dedupe) {
			return nil, err
		}
		aliasTaken = err
	case id == "":
		id = s.IDs.Next(t.Now)
	}
	if scope := (access.TokenScope{ID: id, Containers: pt.Containers}); !p.MayDo(access.PermTokenCreate, scope) {
		return nil, p.DeniedOn(access.PermTokenCreate, scope)
	}
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return nil, err
	}
	fingerprint := pt.Fingerprint(ks)
	// A key that may not read tokens in clear where it creates this one
	// (no token:read there, or one that masks or redacts) is never told
	// of a duplicate, and the fingerprint index is not even looked up for
	// it: the time a match takes would tell a right guess.
	if pt.Dedupe && fingerprint != "" && p.MayReadClearIn(pt.Containers) {
		existing, err := s.findDuplicate(t, p, fingerprint, pt)
		if err != nil {
			return nil, err
		}
		if existing != nil {
			return s.answerDuplicate(t, p, existing)
		}
	}
	if aliasTaken != nil {
		return nil, aliasTaken
	}
	if pt.ID != "" && !pt.absent {
		old, err := s.Load(t, tid, id, true)
		if err != nil {
			return nil, err
		}
		if old != nil && !old.Expired(t.Now) {
			return nil, unit.Errorf(unit.Conflict, "a token with this id exists")
		}
		if old != nil {
			if err := s.Delete(t, unit.SystemActor, old, msgExpired); err != nil {
				return nil, err
			}
		}
	}
	if expiredAlias != nil {
		if err := s.Delete(t, unit.SystemActor, expiredAlias, msgExpired); err != nil {
			return nil, err
		}
	}

	created := t.Now
	if pt.CreatedAt != nil {
		created = *pt.CreatedAt
	}
	rec := &Record{ID: id, TenantID: tid, Type: pt.Type, CreatedBy: p.ActorID, CreatedAt: created, AliasID: pt.Alias != nil || pt.IDTmpl != nil}
	rec.Decoy, rec.DecoyFreeze = pt.Decoy, pt.Decoy && pt.DecoyFreeze
	pt.ApplyTo(rec, ks, t.Now, s.Fingerprints == nil)
	if err := s.Put(t, rec); err != nil {
		return nil, err
	}
	if err := t.Log(p.Actor(), tid, pt.Type, id, unit.OpCreate, msgCreated); err != nil {
		return nil, err
	}
	if err := Emit(t, events.TokenCreated, p.Actor(), rec); err != nil {
		return nil, err
	}
	s.count(t, CountCreated)
	return Present(p, rec, access.PermTokenCreate, PresentCreated), nil
}

// answerDuplicate answers a create that deduplicated to rec, logging and
// telling of the read (channel create) and counting it.
func (s *Service) answerDuplicate(t *unit.Tx, p *access.Principal, rec *Record) (*Token, error) {
	s.decoyRead(t, p, rec) // a guess that found a decoy
	tok, transform := createAnswer(p, rec)
	if err := LogRead(t, p, rec.Type, rec.ID, msgDeduplicated, transform, unit.ChannelCreate); err != nil {
		return nil, err
	}
	if err := EmitReadRecord(t, p, rec); err != nil {
		return nil, err
	}
	s.count(t, CountRead)
	return tok, nil
}

// createAnswer is the answer of a create that deduplicated to rec (a
// token p reads in clear: findDuplicate looks no further), and the transform
// that shaped its data: the answer the create would have had if it had
// made the token (PresentCreated, the transform of p's token:create rule,
// a card or bank account masked), so that one request answers the same
// shape whether it made the token or found it. Answering it as a read
// showed a reveal rule's key the mask the first time and the whole number
// on a repeat.
func createAnswer(p *access.Principal, rec *Record) (*Token, string) {
	return Present(p, rec, access.PermTokenCreate, PresentCreated), PresentTransform(p, rec, access.PermTokenCreate)
}

// findDuplicate returns the live token a deduplicating request matches:
// same type, fingerprint, fingerprint expression and containers, among the
// tokens p reads in clear (MayReadClear). The containers keep
// deduplication from returning a token of a container the request did
// not name; the expression keeps a chosen literal from matching another
// token's fingerprint; and reading in clear keeps a key that may not see
// a token's data (no token:read, or one that masks or redacts it) from
// learning, by getting its id back, that a guessed value is its value:
// such a key always gets a new token.
func (s *Service) findDuplicate(t *unit.Tx, p *access.Principal, fp string, pt *Prepared) (*Record, error) {
	tid := p.TenantID
	ids, err := FingerprintIDs(t, s.Fingerprints, tid, fp)
	if err != nil {
		return nil, err
	}
	want := slices.Sorted(slices.Values(pt.Containers))
	for _, id := range ids {
		rec, err := s.Load(t, tid, id, false)
		if err != nil {
			return nil, err
		}
		if rec != nil && !rec.Erased && rec.Subject == pt.Subject && rec.Fingerprint == fp && rec.Type == pt.Type && rec.FingerprintExpression == pt.FPExpr &&
			slices.Equal(slices.Sorted(slices.Values(rec.Containers)), want) && p.MayReadClear(ScopeOf(rec)) {
			return rec, nil
		}
	}
	return nil, nil
}

// LogRead records that p accessed the data of the token typ/id through
// channel (a unit.Channel* constant), shaped by transform: the line the
// token's access history answers, which also names, for a session, the
// application that authorized it. It is the one form of a token read's
// audit line.
func LogRead(t *unit.Tx, p *access.Principal, typ, id, msg, transform, channel string) error {
	return t.LogLine(p.TenantID, auditchain.Line{
		ActorID: p.ActorID, ActorType: p.ActorType, EntityType: typ, EntityID: id, Operation: unit.OpRead,
		Message: msg, Transform: transform, Channel: channel, Application: p.AppID, Purpose: p.Purpose,
	})
}
