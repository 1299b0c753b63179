package tokenvault

import (
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/reactors"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Helpers for the emit calls beside the audit lines of the features still
// in this package (an application's are internal/events'
// EmitApplication and EmitKeyRegenerated). Tx.Emit builds an event's
// object only when a webhook subscribes to it, and learns which do from
// the events feature's cache (internal/events' subscriptions_read.go), so
// a tenant without webhooks pays a cache look-up per event and no store
// read.

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
		targets, err := v.events.Targets(t.Tx, inv.tenantID, et)
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
