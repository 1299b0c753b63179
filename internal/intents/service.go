package intents

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/ratelimit"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Service is the token intents of one Vault: what it needs of the Vault,
// set when the Vault opens, and the operations, each in the caller's
// unit of work (a *unit.Tx). The caller authenticates the key; the
// Service decides what the principal may do with intents.
type Service struct {
	// IDs makes the ids of new intents.
	IDs *unit.IDSource
	// Sys is the Vault's system keyring: the client address of a
	// creation is indexed by its keyed MAC (ratelimit.PendingAddress).
	Sys *barrier.Keys
	// Lifetime is how long an intent lives when its request gives no
	// expires_at (Options.Retention.TokenIntent, resolved).
	Lifetime time.Duration
	// MaxPerAddress and Max are the caps on live intents per creator and
	// address, and per creator (limits.go); 0 or less: no cap.
	MaxPerAddress, Max int
}

// New is a validated intent to create: the caller validated its data as
// for a token of its type (the token core's rules) and computed the
// fingerprint a token of it gets under the type's default expression.
type New struct {
	Type string
	// Data is the validated data as JSON, a card's without its cvc.
	Data        []byte
	Fingerprint string
	// ExpiresAt, when set, replaces the Service's Lifetime (CheckExpiry
	// checked it).
	ExpiresAt *time.Time
}

// Create stores n for p, the key that may create intents
// (access.Principal.MayCreateIntent, checked by the caller), making room
// for it under the caps first (RateLimited at the creator's ceiling), and
// returns its record. It emits token-intent.created and logs the
// creation.
func (s *Service) Create(t *unit.Tx, p *access.Principal, n New) (*Record, error) {
	addr := ratelimit.PendingAddress(s.Sys, unit.CallOf(t.Ctx).ClientAddress)
	if err := s.makeRoom(t, p.TenantID, p.ActorID, addr); err != nil {
		return nil, err
	}
	rec := &Record{
		ID: s.IDs.Next(t.Now), TenantID: p.TenantID, Type: n.Type, Data: n.Data,
		Fingerprint: n.Fingerprint, CreatedBy: p.ActorID, CreatedByType: p.ActorType,
		CreatedAt: t.Now, ExpiresAt: t.Now.Add(s.Lifetime), CreatedFrom: addr,
	}
	if n.ExpiresAt != nil {
		rec.ExpiresAt = n.ExpiresAt.UTC()
	}
	if err := t.PutRecord(barrier.Tenant(rec.TenantID).TokenIntent(rec.ID), rec); err != nil {
		return nil, err
	}
	for _, k := range append(rec.IndexKeys(), barrier.Tenant(rec.TenantID).TokenIntentExpiry(rec.ExpiresAt, rec.ID)) {
		if err := t.PutIndex(k); err != nil {
			return nil, err
		}
	}
	if err := emit(t, events.TokenIntentCreated, p.Actor(), rec, ""); err != nil {
		return nil, err
	}
	return rec, t.Log(p.Actor(), rec.TenantID, unit.EntityTokenIntent, rec.ID, unit.OpCreate, "Token intent created")
}

// ErrNotFound answers every intent id that cannot be used, whatever the
// reason (never issued, expired, converted, deleted, another tenant's).
var ErrNotFound = unit.NotFoundError("token intent")

// Own returns the live intent id of p's tenant, if p created it or holds
// perm (token-intent:read or token-intent:delete). A key that neither
// created it nor holds perm is PermissionDenied only when it holds perm
// for no intent at all (checked before the lookup, so the answer says
// nothing of the id); else it is ErrNotFound, as an unknown id.
func Own(t *unit.Tx, p *access.Principal, id, perm string) (*Record, error) {
	mayCreate := p.MayCreateIntent()
	if !p.Has(perm) && !mayCreate {
		return nil, unit.Forbidden(perm)
	}
	rec, err := Live(t, p.TenantID, id)
	if err != nil {
		return nil, err
	}
	if !p.Has(perm) && (rec.CreatedBy != p.ActorID || rec.CreatedByType != p.ActorType) {
		// Another key's intent: the same answer as an unknown id.
		return nil, ErrNotFound
	}
	return rec, nil
}

// Live returns the intent id of tenant tid, or ErrNotFound if it does
// not exist or has expired. An id that is not one the Vault makes (a
// UUID) is ErrNotFound without a lookup.
func Live(t *unit.Tx, tid, id string) (*Record, error) {
	if !unit.ValidID(id) {
		return nil, ErrNotFound
	}
	rec, err := Get(t, tid, id)
	if err != nil {
		return nil, err
	}
	if rec == nil || rec.Expired(t.Now) {
		return nil, ErrNotFound
	}
	return rec, nil
}

// Get reads the intent id of tenant tid, expired or not; nil when there
// is none.
func Get(t *unit.Tx, tid, id string) (*Record, error) {
	var rec Record
	ok, err := t.GetRecord(barrier.Tenant(tid).TokenIntent(id), &rec)
	if err != nil || !ok {
		return nil, err
	}
	return &rec, nil
}

// Delete removes an intent as Remove does, with a log line of operation
// delete saying msg, and emits token-intent.deleted: for a deletion by
// its key, an expiry (the sweeper) or an eviction (a cap) alike.
func Delete(t *unit.Tx, by unit.Actor, rec *Record, msg string) error {
	if err := emit(t, events.TokenIntentDeleted, by, rec, ""); err != nil {
		return err
	}
	return remove(t, by, rec, unit.OpDelete, msg)
}

// remove removes an intent, its expiry entry and its entries in the
// caps' indexes, with the log line (op, msg).
func remove(t *unit.Tx, by unit.Actor, rec *Record, op, msg string) error {
	for _, k := range append([]barrier.Key{
		barrier.Tenant(rec.TenantID).TokenIntent(rec.ID),
		barrier.Tenant(rec.TenantID).TokenIntentExpiry(rec.ExpiresAt, rec.ID),
	}, rec.IndexKeys()...) {
		if err := t.Delete(k); err != nil {
			return err
		}
	}
	return t.Log(by, rec.TenantID, unit.EntityTokenIntent, rec.ID, op, msg)
}
