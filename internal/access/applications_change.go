package access

import (
	"fmt"
	"maps"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ApplicationEvents emits the events of applications (internal/events'
// Applications: that package imports this one, so they come in as an
// interface).
type ApplicationEvents interface {
	Created(t *unit.Tx, by unit.Actor, rec *ApplicationRecord) error
	Updated(t *unit.Tx, by unit.Actor, rec *ApplicationRecord) error
	Deleted(t *unit.Tx, by unit.Actor, rec *ApplicationRecord) error
	KeyRegenerated(t *unit.Tx, by unit.Actor, rec *ApplicationRecord, oldHash []byte) error
}

// Applications changes the applications of one Vault: what it needs of
// the Vault, set when the Vault opens, and the operations, each in the
// caller's unit of work. The caller authenticates the key and checks the
// operation's permission; Applications checks the rest (what a management
// application may be given, the tenant's last full manager) and writes
// the record, its key lookup, its expiry entry, its event and its log
// line.
type Applications struct {
	// Sys is the Vault's system keyring: a key is stored as its keyed MAC.
	Sys *barrier.Keys
	// Events emits the applications' events.
	Events ApplicationEvents
}

// Grant is what a request gives an application: its name, permissions
// and rules (normalized: NormalizeGrants), and its allowed origins as
// requested (NormalizeOrigins checks them against the type): nil keeps
// those it has (none for a new application), a pointer to an empty list
// removes them.
type Grant struct {
	Name           string
	Permissions    []string
	Rules          []Rule
	AllowedOrigins *[]string
	// RevealBudget, when set, replaces the reveal budget (one of 0 tokens
	// removes it); nil keeps it (none for a new application).
	RevealBudget *RevealBudget
}

// origins checks g's allowed origins for an application of type typ,
// adding to fe, and returns them normalized; keep when g leaves them.
func (g Grant) origins(typ ApplicationType, keep []string, fe unit.FieldErrors) []string {
	if g.AllowedOrigins == nil {
		return keep
	}
	return NormalizeOrigins(typ, *g.AllowedOrigins, fe)
}

// errCovers is the answer to a grant of permissions the caller does not
// hold to a management application.
func errCovers() error {
	return unit.Errorf(unit.PermissionDenied, "a management application can only be given permissions the caller holds")
}

// Create creates application id of type typ for p with key apiKey,
// expiring at expiresAt when set. fe holds the request's field errors
// found before (its name, type and grants'); Create adds the expiry's,
// checked against t's time, and the allowed origins' (NormalizeOrigins). A management application can only be given
// permissions p holds (PermissionDenied).
func (s *Applications) Create(t *unit.Tx, p *Principal, id, apiKey string, typ ApplicationType, g Grant, expiresAt *time.Time, fe unit.FieldErrors) (*ApplicationRecord, error) {
	fe = maps.Clone(fe)
	if expiresAt != nil {
		unit.CheckExpiry(*expiresAt, t.Now, "expires_at", fe)
	}
	origins := g.origins(typ, nil, fe)
	budget := g.budget(nil, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	if typ == Management && !p.Covers(g.Permissions) {
		return nil, errCovers()
	}
	rec := &ApplicationRecord{
		ID:          id,
		TenantID:    p.TenantID,
		Name:        g.Name,
		Type:        typ,
		Permissions: g.Permissions,
		Rules:       g.Rules,
		CreatedBy:   p.ActorID,
		CreatedAt:   t.Now,

		AllowedOrigins: origins,
		RevealBudget:   budget,
	}
	if expiresAt != nil {
		at := expiresAt.UTC()
		rec.ExpiresAt = &at
	}
	return rec, s.Write(t, p.Actor(), rec, apiKey)
}

// Write writes the new application rec with key apiKey: its record, its
// key lookup, its expiry entry, application.created and the log line.
func (s *Applications) Write(t *unit.Tx, by unit.Actor, rec *ApplicationRecord, apiKey string) error {
	if err := s.setKey(t, rec, apiKey); err != nil {
		return err
	}
	if rec.ExpiresAt != nil {
		if err := t.PutIndex(barrier.Tenant(rec.TenantID).Expiry(*rec.ExpiresAt, unit.EntityApplication, rec.ID)); err != nil {
			return err
		}
	}
	if err := s.Events.Created(t, by, rec); err != nil {
		return err
	}
	return t.Log(by, rec.TenantID, unit.EntityApplication, rec.ID, unit.OpCreate, fmt.Sprintf("Application %q created", rec.Name))
}

// setKey gives rec a new key: it replaces the lookup entry of the old one,
// which stops working with this transaction, and writes rec.
func (s *Applications) setKey(t *unit.Tx, rec *ApplicationRecord, apiKey string) error {
	if rec.KeyHash != nil {
		if err := t.Delete(barrier.APIKeyLookup(rec.KeyHash)); err != nil {
			return err
		}
	}
	rec.KeyHash = s.Sys.MAC([]byte(apiKey))
	ref := KeyRef{TenantID: rec.TenantID, Kind: unit.EntityApplication, ID: rec.ID}
	if err := t.PutRecord(barrier.APIKeyLookup(rec.KeyHash), &ref); err != nil {
		return err
	}
	return t.PutRecord(barrier.Tenant(rec.TenantID).Record(unit.EntityApplication, rec.ID), rec)
}

// Replace replaces the name, permissions and rules of application id of
// p's tenant with g, and its allowed origins when g has them. fe holds
// the request's field errors found before (its name's); Replace adds
// those of the grants and origins, checked against the application's
// type. A management application can only be given
// permissions p holds (PermissionDenied); taking a management permission
// from the tenant's last full manager is ErrLastManager. Returns NotFound
// for an unknown id.
func (s *Applications) Replace(t *unit.Tx, p *Principal, id string, g Grant, fe unit.FieldErrors) (*ApplicationRecord, error) {
	rec, err := MustApplication(t, p.TenantID, id)
	if err != nil {
		return nil, err
	}
	fe = maps.Clone(fe)
	ValidateGrants(rec.Type, g.Permissions, g.Rules, fe)
	origins := g.origins(rec.Type, rec.AllowedOrigins, fe)
	budget := g.budget(rec.RevealBudget, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	if rec.Type == Management && !p.Covers(g.Permissions) {
		return nil, errCovers()
	}
	wasManager := IsFullManager(rec)
	rec.Name, rec.Permissions, rec.Rules, rec.AllowedOrigins = g.Name, g.Permissions, g.Rules, origins
	rec.RevealBudget = budget
	if wasManager && !IsFullManager(rec) {
		if err := KeepsAManager(t, p.TenantID, id, rec); err != nil {
			return nil, err
		}
	}
	now := t.Now
	rec.ModifiedBy, rec.ModifiedAt = p.ActorID, &now
	if err := t.PutRecord(barrier.Tenant(p.TenantID).Record(unit.EntityApplication, id), rec); err != nil {
		return nil, err
	}
	if err := s.Events.Updated(t, p.Actor(), rec); err != nil {
		return nil, err
	}
	return rec, t.Log(p.Actor(), p.TenantID, unit.EntityApplication, id, unit.OpUpdate, fmt.Sprintf("Application %q updated", rec.Name))
}

// Regenerate gives application id of p's tenant the key apiKey; the old
// key is refused from this transaction's commit. A management
// application's key can only be regenerated by a key holding all its
// permissions (PermissionDenied). Returns NotFound for an unknown id.
func (s *Applications) Regenerate(t *unit.Tx, p *Principal, id, apiKey string) (*ApplicationRecord, error) {
	rec, err := MustApplication(t, p.TenantID, id)
	if err != nil {
		return nil, err
	}
	if rec.Type == Management && !p.Covers(rec.Permissions) {
		return nil, unit.Errorf(unit.PermissionDenied, "the key of a management application can only be regenerated by a key holding all its permissions")
	}
	now := t.Now
	rec.ModifiedBy, rec.ModifiedAt = p.ActorID, &now
	oldHash := rec.KeyHash
	if err := s.setKey(t, rec, apiKey); err != nil {
		return nil, err
	}
	if err := s.Events.KeyRegenerated(t, p.Actor(), rec, oldHash); err != nil {
		return nil, err
	}
	return rec, t.Log(p.Actor(), p.TenantID, unit.EntityApplication, id, unit.OpUpdate, "Application key regenerated")
}

// Delete deletes application id of p's tenant; its key is refused from
// this transaction's commit. Deleting the tenant's last full manager is
// ErrLastManager. Returns NotFound for an unknown id.
func (s *Applications) Delete(t *unit.Tx, p *Principal, id string) error {
	rec, err := MustApplication(t, p.TenantID, id)
	if err != nil {
		return err
	}
	if IsFullManager(rec) {
		if err := KeepsAManager(t, p.TenantID, id, nil); err != nil {
			return err
		}
	}
	return s.Remove(t, p.Actor(), rec, "Application deleted")
}

// Remove deletes rec, its key lookup and its expiry entry, emits
// application.deleted and logs msg: for a deletion by a key and an
// expiry (the sweeper) alike.
func (s *Applications) Remove(t *unit.Tx, by unit.Actor, rec *ApplicationRecord, msg string) error {
	// Before the deletion, so that an application deleting itself is
	// still named as the actor.
	if err := s.Events.Deleted(t, by, rec); err != nil {
		return err
	}
	for _, k := range []barrier.Key{
		barrier.Tenant(rec.TenantID).Record(unit.EntityApplication, rec.ID),
		barrier.APIKeyLookup(rec.KeyHash),
	} {
		if err := t.Delete(k); err != nil {
			return err
		}
	}
	if rec.ExpiresAt != nil {
		if err := t.Delete(barrier.Tenant(rec.TenantID).Expiry(*rec.ExpiresAt, unit.EntityApplication, rec.ID)); err != nil {
			return err
		}
	}
	return t.Log(by, rec.TenantID, unit.EntityApplication, rec.ID, unit.OpDelete, msg)
}
