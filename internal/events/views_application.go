package events

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// EmitApplication emits typ about the application rec, made by by, in t.
func EmitApplication(t *unit.Tx, typ string, by unit.Actor, rec *access.ApplicationRecord) error {
	return t.Emit(unit.Event{TenantID: rec.TenantID, Type: typ, By: by, ObjectName: "application", EntityType: unit.EntityApplication, EntityID: rec.ID, View: func() any { return ApplicationView(rec) }})
}

// EmitKeyRegenerated emits application.key.deleted for the key whose
// keyed hash was oldHash, then application.key.created for rec's new
// one, in t.
func EmitKeyRegenerated(t *unit.Tx, by unit.Actor, rec *access.ApplicationRecord, oldHash []byte) error {
	if err := t.Emit(unit.Event{TenantID: rec.TenantID, Type: ApplicationKeyDeleted, By: by, ObjectName: "application",
		EntityType: unit.EntityApplication, EntityID: rec.ID, View: func() any { return applicationKeyView(rec, oldHash) }}); err != nil {
		return err
	}
	return t.Emit(unit.Event{TenantID: rec.TenantID, Type: ApplicationKeyCreated, By: by, ObjectName: "application", EntityType: unit.EntityApplication, EntityID: rec.ID, View: func() any { return applicationKeyView(rec, rec.KeyHash) }})
}

// ApplicationEvent is an application as its events show it: the API's
// application without its key. KeyFingerprint, in application.key.*
// events, tells keys apart.
type ApplicationEvent struct {
	ID          string                 `json:"id"`
	TenantID    string                 `json:"tenant_id"`
	Name        string                 `json:"name"`
	Type        access.ApplicationType `json:"type"`
	Permissions []string               `json:"permissions"`
	Rules       []access.Rule          `json:"rules"`
	ExpiresAt   *time.Time             `json:"expires_at,omitempty"`
	CreatedBy   string                 `json:"created_by,omitempty"`
	CreatedAt   time.Time              `json:"created_at"`
	ModifiedBy  string                 `json:"modified_by,omitempty"`
	ModifiedAt  *time.Time             `json:"modified_at,omitempty"`
	// KeyFingerprint identifies the key an application.key.created or
	// application.key.deleted event is about: 16 hex digits of a hash of
	// the key's keyed hash, the same in the created event of a key and
	// in its deleted one. It reveals nothing of the key.
	KeyFingerprint string   `json:"key_fingerprint,omitempty"`
	Omitted        []string `json:"omitted,omitempty"`
}

// ApplicationView is the application rec as its events show it; its
// rules are dropped when they would make it bigger than MaxViewBytes.
func ApplicationView(rec *access.ApplicationRecord) *ApplicationEvent {
	e := &ApplicationEvent{ID: rec.ID, TenantID: rec.TenantID, Name: rec.Name, Type: rec.Type, Permissions: rec.Permissions,
		Rules: rec.Rules, ExpiresAt: rec.ExpiresAt, CreatedBy: rec.CreatedBy, CreatedAt: rec.CreatedAt,
		ModifiedBy: rec.ModifiedBy, ModifiedAt: rec.ModifiedAt}
	if len(e.Rules) > 0 {
		e.Omitted = FitView(e, []ViewDrop{{"rules", func() { e.Rules = nil }}})
	}
	return e
}

// applicationKeyView is the application with the fingerprint of the key
// whose keyed hash is keyHash.
func applicationKeyView(rec *access.ApplicationRecord, keyHash []byte) *ApplicationEvent {
	e := ApplicationView(rec)
	e.KeyFingerprint = keyFingerprint(keyHash)
	return e
}

// keyFingerprint is 16 hex digits of SHA-256 over a key's keyed hash
// (itself an HMAC under the Vault's system key): stable for a key,
// useless to find it.
func keyFingerprint(keyHash []byte) string {
	if len(keyHash) == 0 {
		return ""
	}
	h := sha256.Sum256(append([]byte("tokenvault key fingerprint\x00"), keyHash...))
	return hex.EncodeToString(h[:8])
}
