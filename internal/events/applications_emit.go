package events

import (
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Applications emits the events of applications for internal/access
// (access.ApplicationEvents), which cannot import this package: this one
// imports it.
type Applications struct{}

// Created emits application.created.
func (Applications) Created(t *unit.Tx, by unit.Actor, rec *access.ApplicationRecord) error {
	return EmitApplication(t, ApplicationCreated, by, rec)
}

// Updated emits application.updated.
func (Applications) Updated(t *unit.Tx, by unit.Actor, rec *access.ApplicationRecord) error {
	return EmitApplication(t, ApplicationUpdated, by, rec)
}

// Deleted emits application.deleted.
func (Applications) Deleted(t *unit.Tx, by unit.Actor, rec *access.ApplicationRecord) error {
	return EmitApplication(t, ApplicationDeleted, by, rec)
}

// KeyRegenerated emits application.key.deleted and application.key.created
// (EmitKeyRegenerated).
func (Applications) KeyRegenerated(t *unit.Tx, by unit.Actor, rec *access.ApplicationRecord, oldHash []byte) error {
	return EmitKeyRegenerated(t, by, rec, oldHash)
}
