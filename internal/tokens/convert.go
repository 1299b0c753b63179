package tokens

import (
	"bytes"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The token's side of a token intent's conversion (internal/intents,
// convert.go, has the intent's rules): the request's own fields checked
// before the transaction, then, in it, the intent's data validated as a
// token's, deduplicated or created.

// Conversion is what a conversion request (a Request with TokenIntentID)
// carries until its transaction reads the intent.
type Conversion struct {
	id   string
	req  Request
	path string
}

// prepareConversion checks a conversion request's own fields: type and
// data must be absent, and the intent id must be one an intent can have.
// The rest is checked once the intent's data is known (convert).
func prepareConversion(req Request, now time.Time, path string, fe unit.FieldErrors) *Conversion {
	join := jsontext.Field
	if req.Type != "" {
		fe.Add(join(path, "type"), "must not be given with token_intent_id: the intent's type is used")
	}
	if req.Data != nil {
		fe.Add(join(path, "data"), "must not be given with token_intent_id: the intent's data is used")
	}
	if CustomIDProblem(req.TokenIntentID) != "" {
		fe.Add(join(path, "token_intent_id"), "is not a token intent id")
	}
	if req.ExpiresAt != nil {
		unit.CheckExpiry(*req.ExpiresAt, now, join(path, "expires_at"), fe)
	}
	ValidateMetadata(req.Metadata, join(path, "metadata"), fe)
	return &Conversion{id: req.TokenIntentID, req: req, path: path}
}

// convert creates the token a conversion asks for, or returns the
// existing token it deduplicates to, and deletes the intent, all in t
// (Intents.Convert). Returns NotFound for an intent that does not exist
// (expired, converted, deleted, another tenant's), PermissionDenied for a
// key that is not a private application's or that sets expressions
// without a revealing token:create rule (Intents.CheckExpressions),
// Invalid when the request's fields do not fit the intent's data (paths
// under the request's).
func (s *Service) convert(t *unit.Tx, p *access.Principal, c *Conversion) (*Token, error) {
	var tok *Token
	err := s.Intents.Convert(t, p, c.id, func(typ string, sealed []byte) (string, error) {
		data, err := jsontext.DecodeLastWins(sealed)
		if err != nil {
			return "", err
		}
		if conversionSetsExpressions(c.req) {
			containers := c.req.Containers
			if len(containers) == 0 {
				containers = []string{DefaultContainer[typ]}
			}
			if err := s.Intents.CheckExpressions(p, containers); err != nil {
				return "", err
			}
		}
		req := c.req
		req.TokenIntentID, req.Type, req.Data = "", typ, ExprData(typ, data)
		req.DeduplicateToken = true
		fe := unit.FieldErrors{}
		full := s.Prepare(req, t.Now, t.Now, c.path, true, fe)
		if err := fe.Err(); err != nil {
			return "", err
		}
		existing, err := s.intentDuplicate(t, p, full)
		if err != nil {
			return "", err
		}
		if existing != nil {
			tok, err = s.refreshFromIntent(t, p, existing, full, c.path)
		} else {
			tok, err = s.Create(t, p, full)
		}
		if err != nil {
			return "", err
		}
		return tok.ID, nil
	})
	if err != nil {
		return nil, err
	}
	return tok, nil
}

// conversionSetsExpressions reports whether a conversion request sets
// expressions of its own (a mask, search indexes, a fingerprint
// expression, an id with {{ }}), which Intents.CheckExpressions allows
// only to a key that may see the intent's data.
func conversionSetsExpressions(req Request) bool {
	return req.Mask != nil || len(req.SearchIndexes) > 0 || req.FingerprintExpression != "" || strings.Contains(req.ID, "{{")
}

// intentDuplicate is the live token a conversion deduplicates to (see
// findDuplicate), or nil. As Create, it needs token:create where the
// token would be made, and looks nothing up for a key that may not read
// in clear there (MayReadClearIn).
func (s *Service) intentDuplicate(t *unit.Tx, p *access.Principal, full *Prepared) (*Record, error) {
	if scope := (access.TokenScope{ID: full.ID, Containers: full.Containers}); !p.MayDo(access.PermTokenCreate, scope) {
		return nil, p.DeniedOn(access.PermTokenCreate, scope)
	}
	ks, err := t.TenantKeys(p.TenantID, false)
	if err != nil {
		return nil, err
	}
	fp := full.Fingerprint(ks)
	if fp == "" || !p.MayReadClearIn(full.Containers) {
		return nil, nil
	}
	return s.findDuplicate(t, p, fp, full)
}

// refreshFromIntent writes the intent's data (full's) into rec, the token
// a conversion deduplicates to, as Patch would with the data replaced
// whole, and returns it as a deduplicated create does. Data that is the
// same already, or a key without token:update on rec, leaves it
// unchanged.
func (s *Service) refreshFromIntent(t *unit.Tx, p *access.Principal, rec *Record, full *Prepared, path string) (*Token, error) {
	if _, mayUpdate := p.Decide(access.PermTokenUpdate, ScopeOf(rec)); !mayUpdate || bytes.Equal(rec.Data, full.DataJSON) {
		return s.answerDuplicate(t, p, rec)
	}
	req, err := PatchedRequest(rec, map[string]any{"data": full.Data}, true)
	if err != nil {
		return nil, err
	}
	fe := unit.FieldErrors{}
	pt := s.Prepare(req, t.Now, t.Now, path, true, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	now := t.Now
	next := &Record{ID: rec.ID, TenantID: rec.TenantID, Type: rec.Type, CreatedBy: rec.CreatedBy, CreatedAt: rec.CreatedAt,
		Decoy: rec.Decoy, DecoyFreeze: rec.DecoyFreeze,
		ModifiedBy: p.ActorID, ModifiedAt: &now}
	pt.NewCVC = false // the intent brings no cvc
	if err := s.rewrite(t, rec, next, pt); err != nil {
		return nil, err
	}
	s.count(t, CountUpdated)
	if err := t.Log(p.Actor(), p.TenantID, next.Type, next.ID, unit.OpUpdate, "Token updated (token intent converted)"); err != nil {
		return nil, err
	}
	if err := Emit(t, events.TokenUpdated, p.Actor(), next); err != nil {
		return nil, err
	}
	tok, _ := createAnswer(p, next)
	return tok, nil
}
