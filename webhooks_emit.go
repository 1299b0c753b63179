package tokenvault

import (
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/intents"
	"github.com/tokenvault/tokenvault/internal/reactors"
	"github.com/tokenvault/tokenvault/internal/sessions"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Helpers for the emit calls beside the audit lines. emit builds an
// event's object only when a webhook subscribes to it, and learns which
// do from the Vault's cache (webhooks_subscriptions.go), so a tenant
// without webhooks pays a cache look-up per event and no store read.

// emitToken emits typ about the token rec.
func (t *txn) emitToken(typ string, by actor, rec *tokens.Record) error {
	return t.Emit(unit.Event{TenantID: rec.TenantID, Type: typ, By: by, ObjectName: "token", EntityType: EntityToken, EntityID: rec.ID, View: func() any { return tokenEventView(rec) }})
}

// emitTokenRead emits token.read for a token whose data p was handed,
// as the API showed it (Data and Mask are left behind).
func (t *txn) emitTokenRead(p *principal, tok *Token) error {
	return t.Emit(unit.Event{TenantID: p.TenantID, Type: EventTokenRead, By: p.Actor(), ObjectName: "token", EntityType: EntityToken, EntityID: tok.ID, View: func() any { return tokenEventOf(tok) }})
}

// emitTokenReadRecord is emitTokenRead of a stored token.
func (t *txn) emitTokenReadRecord(p *principal, rec *tokens.Record) error {
	return t.Emit(unit.Event{TenantID: p.TenantID, Type: EventTokenRead, By: p.Actor(), ObjectName: "token", EntityType: EntityToken, EntityID: rec.ID, View: func() any { return tokenEventView(rec) }})
}

// emitTokenDeleted emits token.deleted, or token.expired when the
// sweeper (the system actor) removes a token whose time passed.
func (t *txn) emitTokenDeleted(by actor, rec *tokens.Record) error {
	typ := EventTokenDeleted
	if by == systemActor {
		typ = EventTokenExpired
	}
	return t.emitToken(typ, by, rec)
}

// emitCVCExpired emits token.property.expired for the card rec whose cvc
// the sweeper removed.
func (t *txn) emitCVCExpired(rec *tokens.Record) error {
	return t.Emit(unit.Event{TenantID: rec.TenantID, Type: EventTokenPropertyExpired, By: systemActor, ObjectName: "token", EntityType: EntityToken, EntityID: rec.ID, View: func() any {
		e := tokenEventView(rec)
		e.Property = cvcField
		return e
	}})
}

// emitIntent emits typ about the token intent rec (tokenID: the token a
// converted intent became).
func (t *txn) emitIntent(typ string, by actor, rec *intents.Record, tokenID string) error {
	return t.Emit(unit.Event{TenantID: rec.TenantID, Type: typ, By: by, ObjectName: "token_intent", EntityType: EntityTokenIntent, EntityID: rec.ID, View: func() any { return tokenIntentEventView(rec, tokenID) }})
}

// emitApplication emits typ about the application rec.
func (t *txn) emitApplication(typ string, by actor, rec *access.ApplicationRecord) error {
	return t.Emit(unit.Event{TenantID: rec.TenantID, Type: typ, By: by, ObjectName: "application", EntityType: EntityApplication, EntityID: rec.ID, View: func() any { return applicationEventView(rec) }})
}

// emitKeyRegenerated emits application.key.deleted for the key whose
// keyed hash was oldHash, then application.key.created for rec's new
// one.
func (t *txn) emitKeyRegenerated(by actor, rec *access.ApplicationRecord, oldHash []byte) error {
	if err := t.Emit(unit.Event{TenantID: rec.TenantID, Type: EventApplicationKeyDeleted, By: by, ObjectName: "application",
		EntityType: EntityApplication, EntityID: rec.ID, View: func() any { return applicationKeyEventView(rec, oldHash) }}); err != nil {
		return err
	}
	return t.Emit(unit.Event{TenantID: rec.TenantID, Type: EventApplicationKeyCreated, By: by, ObjectName: "application", EntityType: EntityApplication, EntityID: rec.ID, View: func() any { return applicationKeyEventView(rec, rec.KeyHash) }})
}

// emitProxy emits typ about the proxy p.
func (t *txn) emitProxy(typ string, by actor, p *Proxy) error {
	entityID := p.ID
	if typ == EventProxyInvoked {
		entityID = ""
	}
	return t.Emit(unit.Event{TenantID: p.TenantID, Type: typ, By: by, ObjectName: "proxy", EntityType: EntityProxy, EntityID: entityID, View: func() any { return proxyEventView(p) }})
}

// emitReactor emits typ about the reactor r.
func (t *txn) emitReactor(typ string, by actor, r *Reactor) error {
	return t.Emit(unit.Event{TenantID: r.TenantID, Type: typ, By: by, ObjectName: "reactor", EntityType: EntityReactor, EntityID: r.ID, View: func() any { return reactorEventView(r) }})
}

// emitSession emits typ about the session rec.
func (t *txn) emitSession(typ string, by actor, rec *sessions.Record) error {
	return t.Emit(unit.Event{TenantID: rec.TenantID, Type: typ, By: by, ObjectName: "session", EntityType: EntitySession, EntityID: rec.ID, View: func() any { return sessionEventView(rec) }})
}

// emitMember emits typ about the member m.
func (t *txn) emitMember(typ string, by actor, m *TenantMember) error {
	return t.Emit(unit.Event{TenantID: m.TenantID, Type: typ, By: by, ObjectName: "member", EntityType: EntityTenantMember, EntityID: m.ID, View: func() any { return memberEventView(m) }})
}

// emitInvitation emits typ about the invitation rec.
func (t *txn) emitInvitation(typ string, by actor, rec *tenants.InvitationRecord) error {
	return t.Emit(unit.Event{TenantID: rec.TenantID, Type: typ, By: by, ObjectName: "invitation", EntityType: EntityTenantInvitation, EntityID: rec.ID, View: func() any { return invitationEventView(rec) }})
}

// emitInvocationEnd emits reactor.completed or reactor.failed for the
// asynchronous invocation inv, which ended with err (nil: succeeded), in
// a transaction of its own: the invocation's own transaction committed
// before its code ran. It carries no sequence (an invocation ends once)
// and the trace id of the call that started it. A synchronous invocation
// emits reactor.invoked only: its caller has the outcome. A failure to
// write the event is logged (Options.Logger, as every internal error)
// and otherwise dropped, as a callback that cannot be delivered is: the
// outcome stands.
func (v *Vault) emitInvocationEnd(inv *invocation, err error) {
	typ, view := EventReactorCompleted, &invocationEvent{ID: inv.id, ReactorID: inv.reactorID, Status: "succeeded"}
	if err != nil {
		typ, view.Status = EventReactorFailed, "failed"
		view.ErrorStatus = reactors.CallbackErrorOf(err).Status
	}
	ctx := WithCallInfo(v.bg, &CallInfo{TraceID: inv.traceID})
	et, _ := events.Lookup(typ)
	subscribed := false
	if v.view(ctx, func(t *txn) error {
		targets, err := t.webhookTargets(inv.tenantID, et)
		subscribed = len(targets) > 0
		return err
	}) != nil || !subscribed {
		return
	}
	if err := v.update(ctx, func(t *txn) error {
		return t.Emit(unit.Event{TenantID: inv.tenantID, Type: typ, By: inv.by, ObjectName: "invocation", EntityType: EntityReactor, EntityID: "", View: func() any { return view }})
	}); err != nil {
		v.logger.Warn("tokenvault: the end of an asynchronous reactor invocation emitted no event", "event", typ, "err", err)
	}
}
