package tokens

import (
	"encoding/json"
	"slices"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The events of tokens are emitted beside their audit lines, through the
// unit of work (unit.Tx.Emit): the events feature builds a view only
// when a webhook subscribes to it, so a tenant without webhooks pays a
// cache look-up per event and no view.

// Emit emits typ about the token rec.
func Emit(t *unit.Tx, typ string, by unit.Actor, rec *Record) error {
	return t.Emit(unit.Event{TenantID: rec.TenantID, Type: typ, By: by, ObjectName: "token", EntityType: unit.EntityToken, EntityID: rec.ID, View: func() any { return EventView(rec) }})
}

// EmitRead emits token.read for a token whose data p was handed,
// as the API showed it (Data and Mask are left behind).
func EmitRead(t *unit.Tx, p *access.Principal, tok *Token) error {
	return t.Emit(unit.Event{TenantID: p.TenantID, Type: events.TokenRead, By: p.Actor(), ObjectName: "token", EntityType: unit.EntityToken, EntityID: tok.ID, View: func() any { return EventOf(tok) }})
}

// EmitReadRecord is EmitRead of a stored token.
func EmitReadRecord(t *unit.Tx, p *access.Principal, rec *Record) error {
	return t.Emit(unit.Event{TenantID: p.TenantID, Type: events.TokenRead, By: p.Actor(), ObjectName: "token", EntityType: unit.EntityToken, EntityID: rec.ID, View: func() any { return EventView(rec) }})
}

// EmitDeleted emits token.deleted, or token.expired when the
// sweeper (the system actor) removes a token whose time passed.
func EmitDeleted(t *unit.Tx, by unit.Actor, rec *Record) error {
	typ := events.TokenDeleted
	if by == unit.SystemActor {
		typ = events.TokenExpired
	}
	return Emit(t, typ, by, rec)
}

// EmitCVCExpired emits token.property.expired for the card rec whose cvc
// the sweeper removed.
func EmitCVCExpired(t *unit.Tx, rec *Record) error {
	return t.Emit(unit.Event{TenantID: rec.TenantID, Type: events.TokenPropertyExpired, By: unit.SystemActor, ObjectName: "token", EntityType: unit.EntityToken, EntityID: rec.ID, View: func() any {
		e := EventView(rec)
		e.Property = CVCField
		return e
	}})
}

// maxViewBytes bounds an event's object as JSON: events.MaxEventBytes less room
// for the envelope and the actor (an id, a name of at most 200
// characters, a trace id), as every view of the events feature.
const maxViewBytes = events.MaxEventBytes - 4<<10

// Event is a token as its events show it: the API's Token as a
// caller that may not read its data sees it (Data and Mask nil, so left
// out), with what an event adds.
type Event struct {
	Token
	// Property names the property token.property.expired removed ("cvc").
	Property string `json:"property,omitempty"`
	// Omitted names the fields left out to keep the event small.
	Omitted []string `json:"omitted,omitempty"`
}

// EventView is a token as its events show it: no data, no mask.
// The mask is dropped before TokenOf, which would otherwise decode it.
func EventView(rec *Record) *Event {
	r := *rec
	r.Data, r.Mask = nil, nil
	return fitEvent(&Event{Token: *TokenOf(&r, "")})
}

// EventOf is EventView of a token as the API returned it (a
// page of a list or a search): its Data and Mask are left behind.
func EventOf(tok *Token) *Event {
	e := &Event{Token: *tok}
	e.Data, e.Mask, e.Containers = nil, nil, slices.Clone(tok.Containers)
	return fitEvent(e)
}

// fitEvent keeps a token's view within maxViewBytes: it drops the search
// indexes, then the fingerprint expression, then the metadata (each can
// reach several kB: 20 expressions of 4 kB, 50 entries of 600 bytes),
// and names what it dropped in Omitted. Most tokens are far below the
// bound, which a sum of lengths shows without encoding them.
func fitEvent(e *Event) *Event {
	n := len(e.FingerprintExpression)
	for _, s := range e.SearchIndexes {
		n += len(s)
	}
	for k, v := range e.Metadata {
		n += len(k) + len(v)
	}
	for _, c := range e.Containers {
		n += len(c)
	}
	// JSON escapes a byte in at most 6: below this the view fits.
	if 6*n+1024 <= maxViewBytes {
		return e
	}
	drops := []struct {
		name string
		drop func()
	}{
		{"search_indexes", func() { e.SearchIndexes = nil }},
		{"fingerprint_expression", func() { e.FingerprintExpression = "" }},
		{"metadata", func() { e.Metadata = nil }},
	}
	for _, d := range drops {
		if b, err := json.Marshal(e); err == nil && len(b) <= maxViewBytes {
			break
		}
		d.drop()
		e.Omitted = append(e.Omitted, d.name)
	}
	return e
}
