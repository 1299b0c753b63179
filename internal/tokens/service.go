package tokens

import (
	"io"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/aliases"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Service is the token feature as a Vault wires it in Open: the state
// its reads and writes need beyond the transaction, and what it needs of
// the features it meets (aliases, intents). Its methods take a *unit.Tx
// and an access.Principal the caller has authenticated and authorized
// for the call's permission; they count what they do through Count.
type Service struct {
	// IDs makes the ids of new tokens (time-ordered).
	IDs *unit.IDSource
	// Rand is the randomness alias ids are drawn with (Options.Rand).
	Rand io.Reader
	// Aliases checks and draws alias and fpe ids (an *aliases.Rules).
	Aliases Aliases
	// Intents converts token intents (intents.Converter).
	Intents Intents
	// Count, when set, counts one token operation (a Count* name) of the
	// unit of work t, for the Vault's metrics.
	Count func(t *unit.Tx, op string)
	// Fingerprints is the fingerprint index on a store one process
	// holds; nil on a shared store, which keeps it in the store.
	Fingerprints *FingerprintMemory
	// CVCRetention is how long a card's cvc is kept after it was written
	// (Options.Retention.CVC, resolved).
	CVCRetention time.Duration
	// Lists keeps the token lists' entries and counts beside every token
	// write (the listing feature's bookkeeping).
	Lists Lists
	// Reveals, when set, is asked before every reveal (RevealGate).
	Reveals RevealGate
	// Subjects holds the data subjects' keys (internal/subjects); nil
	// when the vault has no subject key store: a token with a subject is
	// then refused (Unavailable).
	Subjects SubjectKeys
}

// SubjectKeys is the data subjects' key store as tokens use it: Current
// is the key a subject's new token is sealed under, made (and committed
// to the key store) when the subject has none; Key is a key by id, nil
// when it was destroyed. Neither caches: another instance may have
// destroyed a key.
type SubjectKeys interface {
	Current(t *unit.Tx, tid, subject string) (keyID string, key []byte, err error)
	Key(t *unit.Tx, tid, keyID string) ([]byte, error)
}

// ErrNoSubjectKeys is the error of a token with a subject on a vault with
// no subject key store.
var ErrNoSubjectKeys = unit.Errorf(unit.Unavailable, "this vault has no subject key store (Options.SubjectKeys): tokens cannot carry a subject")

// ErasedError is the error of a read of a token whose data subject was
// erased: its key is destroyed and its data gone for good.
func ErasedError() error {
	return unit.Errorf(unit.Gone, "erased: the token's data subject was erased and its data can never be read again")
}

// openSubject opens the data of rec, a token of a data subject, with its
// key (Record.OpenSubject), or marks it Erased when the key is gone.
func (s *Service) openSubject(t *unit.Tx, rec *Record) error {
	if rec.Subject == "" {
		return nil
	}
	if s.Subjects == nil {
		return ErrNoSubjectKeys
	}
	key, err := s.Subjects.Key(t, rec.TenantID, rec.SubjectKeyID)
	if err != nil {
		return err
	}
	return rec.OpenSubject(key)
}

// Lists is the bookkeeping of the token lists that a token write calls:
// List for a new token, Move for a new version of one (prev is the
// version it replaces), Unlist for one about to be deleted.
type Lists interface {
	List(t *unit.Tx, rec *Record) error
	Move(t *unit.Tx, prev, rec *Record) error
	Unlist(t *unit.Tx, rec *Record) error
}

// Aliases is what a token request needs of alias and fpe ids:
// *aliases.Rules, which the Vault builds with this package's rules.
type Aliases interface {
	ParseIDExpression(id, path string, fe unit.FieldErrors) *expr.Template
	FPEIDVars(typ string, data any, metadata map[string]string) expr.Resolver
	Prepare(tmpl *expr.Template, vars expr.Resolver, path string, fe unit.FieldErrors) *aliases.ID
	CheckDisplay(typ string, data any, metadata map[string]string, maskExpr any, idTmpl *expr.Template, maskPath, idPath string, fe unit.FieldErrors)
	CheckMaskKeepsID(aliasID bool, typ string, stored, maskExpression []byte, newMask any, fe unit.FieldErrors)
	DeriveFPEID(t *unit.Tx, p *access.Principal, containers []string, tmpl *expr.Template, vars expr.Resolver, path string) (string, error)
}

// Intents is what converting a token intent needs of the intents
// feature (intents.Converter): Convert runs makeToken over the live
// intent's type and data and removes the intent; CheckExpressions refuses
// expressions over data p may not see where the token goes.
type Intents interface {
	Convert(t *unit.Tx, p *access.Principal, id string, makeToken func(typ string, data []byte) (tokenID string, err error)) error
	CheckExpressions(p *access.Principal, containers []string) error
}

// The token operations Service.Count counts (the Vault's TokenOp names).
const (
	CountCreated = "created"
	CountRead    = "read"
	CountUpdated = "updated"
)

// count counts op in t when the Vault counts.
func (s *Service) count(t *unit.Tx, op string) {
	if s.Count != nil {
		s.Count(t, op)
	}
}

// CVCDue reports whether rec holds a cvc past its retention at now.
func (s *Service) CVCDue(rec *Record, now time.Time) bool {
	at, ok := CVCWrittenAt(rec)
	return ok && !now.Before(at.Add(s.CVCRetention))
}

// hideStaleCVC leaves a cvc past its retention out of rec as read, before
// anything else sees the record.
func (s *Service) hideStaleCVC(rec *Record, now time.Time) {
	if s.CVCDue(rec, now) {
		rec.Data = WithoutCVC(rec.Data)
		rec.CVCAt = nil
	}
}

// Load reads a token, without a cvc past its retention (see cvc.go).
// It returns nil for a missing token and, unless withExpired, for one past
// its expires_at. A token of an erased data subject is returned Erased,
// without its data: callers that use data refuse it (Must).
func (s *Service) Load(t *unit.Tx, tid, id string, withExpired bool) (*Record, error) {
	if !ValidID(id) {
		return nil, nil
	}
	var rec Record
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(Kind, id), &rec)
	if err != nil || !ok {
		return nil, err
	}
	if err := s.openSubject(t, &rec); err != nil {
		return nil, err
	}
	s.hideStaleCVC(&rec, t.Now)
	if !withExpired && rec.Expired(t.Now) {
		return nil, nil
	}
	return &rec, nil
}

// Must loads a live token the caller may use with perm, and the
// transform that applies. Unknown and expired tokens are NotFound; a token
// the caller's rules do not reach is PermissionDenied, or Invalid (field
// purpose) when a rule requiring a purpose would reach it and the call
// names none. A token of an erased data subject (a copy an older backup
// brought back) is Gone, but to token:delete, which removes it.
func (s *Service) Must(t *unit.Tx, p *access.Principal, id, perm string) (*Record, string, error) {
	rec, err := s.Load(t, p.TenantID, id, false)
	if err != nil {
		return nil, "", err
	}
	if rec == nil {
		return nil, "", unit.NotFoundError("token")
	}
	transform, err := p.DecideOne(perm, ScopeOf(rec))
	if err == nil && rec.Erased && perm != access.PermTokenDelete {
		err = ErasedError()
	}
	if err != nil {
		return nil, "", err
	}
	return rec, transform, nil
}

// Put writes a new token record, its index entries and its list index
// entries and counts.
func (s *Service) Put(t *unit.Tx, rec *Record) error { return s.Write(t, nil, rec) }

// Write writes a token record, its index entries and its list index
// entries and counts. prev is the version it replaces (an update; nil for
// a new token), whose index entries the caller removed: its list entries
// are moved (Lists.Move), so they are written only when they change.
func (s *Service) Write(t *unit.Tx, prev, rec *Record) error {
	if rec.Subject != "" && rec.subjectKey() == nil && !rec.Erased {
		if s.Subjects == nil {
			return ErrNoSubjectKeys
		}
		id, key, err := s.Subjects.Current(t, rec.TenantID, rec.Subject)
		if err != nil {
			return err
		}
		rec.SubjectKeyID = id
		rec.SetSubjectKey(key)
	}
	if err := t.PutRecord(barrier.Tenant(rec.TenantID).Record(Kind, rec.ID), rec); err != nil {
		return err
	}
	var err error
	if prev != nil {
		err = s.Lists.Move(t, prev, rec)
	} else {
		err = s.Lists.List(t, rec)
	}
	if err != nil {
		return err
	}
	IndexFingerprint(t, s.Fingerprints, rec)
	for _, k := range rec.Indexes {
		if err := t.PutIndex(barrier.IndexEntry(k)); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes a token, its index entries, its list index entries
// and count, and its schedule, and logs it (msg) and emits its event as
// by's.
func (s *Service) Delete(t *unit.Tx, by unit.Actor, rec *Record, msg string) error {
	if err := t.Delete(barrier.Tenant(rec.TenantID).Record(Kind, rec.ID)); err != nil {
		return err
	}
	if err := s.Lists.Unlist(t, rec); err != nil {
		return err
	}
	UnindexFingerprint(t, s.Fingerprints, rec)
	for _, k := range rec.Indexes {
		if err := t.Delete(barrier.IndexEntry(k)); err != nil {
			return err
		}
	}
	if err := EmitDeleted(t, by, rec); err != nil {
		return err
	}
	return t.Log(by, rec.TenantID, rec.Type, rec.ID, unit.OpDelete, msg)
}

// Present shapes a token for a caller using perm: data revealed, masked or
// removed by the transform that applies (redacted when perm does not reach
// the token). Create and update responses never reveal a card or bank
// account: they carry the mask. A caller that may not read the token is
// shown only what the Presentation allows.
func Present(p *access.Principal, rec *Record, perm string, what Presentation) *Token {
	tok := TokenOf(rec, PresentTransform(p, rec, perm))
	if !p.MayReadClear(ScopeOf(rec)) {
		tok.Fingerprint = ""
	}
	if what != PresentCreated && !p.MayRead(ScopeOf(rec)) {
		tok.WithholdContent()
	}
	return tok
}
