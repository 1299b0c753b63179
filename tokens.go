package tokenvault

import (
	"context"
	"time"

	"github.com/tokenvault/tokenvault/internal/intents"
	"github.com/tokenvault/tokenvault/internal/subjects"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The token types.
const (
	TypeToken = unit.TypeToken
	TypeCard  = unit.TypeCard
	TypeBank  = unit.TypeBank
)

// TokenRequest asks for one token (see tokens.Request for its fields). In
// a Tokenize body, an object is a token request when it has a "type"
// naming a token type and a "data" property; any other object is walked
// as plain structure.
type TokenRequest = tokens.Request

// Token is a token as returned to a caller, its data shaped by the
// caller's access (see tokens.Token).
type Token = tokens.Token

// The token feature is internal/tokens. These are its names as the
// features still in this package (reactors, records, the sweeper) call
// them; each goes when its callers have moved.
var (
	tokenizeBody = tokens.DecodeBody
	tokenOf      = tokens.TokenOf
)

const kindToken = tokens.Kind

func (t *txn) loadToken(tid, id string, withExpired bool) (*tokens.Record, error) {
	return t.v.tokens.Load(t.Tx, tid, id, withExpired)
}

func (t *txn) deleteToken(by actor, rec *tokens.Record, msg string) error {
	return t.v.tokens.Delete(t.Tx, by, rec, msg)
}

// newTokens makes the Vault's token feature (Open): its ids, randomness,
// fingerprint index and cvc retention, the token lists, the alias rules
// and the intents it converts, and the metrics it counts into.
func (v *Vault) newTokens() *tokens.Service {
	s := &tokens.Service{
		IDs: &v.ids, Rand: v.rand, Aliases: tokens.AliasRules, Intents: intents.Converter{},
		Fingerprints: v.fingerprints, CVCRetention: v.cvcRetention, Lists: v.lists, Reveals: revealGate{v},
		Count: func(t *unit.Tx, op string) { (&txn{Tx: t, v: v}).count(TokenOp(op)) },
	}
	if v.subjectKeys != nil {
		s.Subjects = subjects.TokenKeys{Keys: v.subjectKeys}
	}
	return s
}

// Card is the data of a card token (type card), as Go fields: what a
// TokenRequest of type card holds in Data, which a Card may also be
// given as. The card's number is 13 to 19 plain digits passing the Luhn
// check, ExpirationMonth 1 to 12, ExpirationYear four digits, and the card
// not expired; CVC, when set, is 3 or 4 digits and is kept only for
// Options.Retention.CVC.
type Card struct {
	Number          string `json:"number"`
	ExpirationMonth int    `json:"expiration_month"`
	ExpirationYear  int    `json:"expiration_year"`
	CVC             string `json:"cvc,omitempty"`
}

// TokenCreator creates tokens: a *Vault in process, or a *client.Client
// over HTTP. TokenizeAs takes either.
type TokenCreator interface {
	CreateToken(ctx context.Context, key Credential, req TokenRequest) (*Token, error)
}

// TokenReader reads tokens: a *Vault in process, or a *client.Client over
// HTTP. DetokenizeAs takes either.
type TokenReader interface {
	GetToken(ctx context.Context, key Credential, id string) (*Token, error)
}

// DefaultCVCRetention is how long a card's cvc is kept when
// Options.Retention.CVC is zero.
const DefaultCVCRetention = time.Hour

// sweepCVCs removes from the stored records every cvc past its retention,
// in transactions of at most sweepBatch cards, and returns how many it
// removed. Sweep calls it.
func (v *Vault) sweepCVCs(ctx context.Context) (int, error) {
	total, err := v.scheduleLegacyCVCs(ctx)
	if err != nil {
		return total, err
	}
	for {
		n, more, err := v.sweepCVCsOnce(ctx)
		total += n
		if err != nil || !more {
			return total, err
		}
	}
}

// sweepCVCsOnce removes up to sweepBatch due cvcs in one transaction: each
// card record is written again without its cvc, its schedule entry
// deleted, and the removal logged, together or not at all.
func (v *Vault) sweepCVCsOnce(ctx context.Context) (removed int, more bool, err error) {
	return v.work.SweepDue(ctx, tokens.CVCSchedule, v.tokens.CVCsDueThrough, sweepBatch, func(t *unit.Tx, rest string) (bool, error) {
		done, err := v.tokens.RemoveScheduledCVC(t, rest)
		if done {
			(&txn{Tx: t, v: v}).sweptOne(SweptCVCs)
		}
		return done, err
	})
}

// scheduleLegacyCVCs gives every card stored before cvc retention existed
// (a cvc without CVCAt) its schedule: it visits every tenant's token
// records once, sweepBatch a transaction, removing the cvcs already due and
// recording when the others were written (tokens.CVCWrittenAt). Cards written
// since carry their schedule, so once the scan is done it is one read per
// sweep. It returns how many cvcs it removed.
func (v *Vault) scheduleLegacyCVCs(ctx context.Context) (int, error) {
	total := 0
	for {
		n, done, err := v.scheduleLegacyCVCsOnce(ctx)
		total += n
		if err != nil || done {
			return total, err
		}
	}
}

func (v *Vault) scheduleLegacyCVCsOnce(ctx context.Context) (removed int, done bool, err error) {
	err = v.update(ctx, func(t *txn) error {
		var err error
		removed, done, err = v.tokens.ScheduleLegacyCVCs(t.Tx, sweepBatch)
		return err
	})
	return removed, done, err
}
