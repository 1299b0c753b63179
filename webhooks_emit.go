package tokenvault

import (
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/reactors"
)

// The end of an asynchronous invocation is the one event emitted outside
// its call's transaction: the event itself is internal/reactors'
// (EmitInvocation), as are those of reactors and proxies.

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
	typ, view := EventReactorCompleted, &reactors.InvocationEvent{ID: inv.id, ReactorID: inv.reactorID, Status: "succeeded"}
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
		return reactors.EmitInvocation(t.Tx, inv.tenantID, typ, inv.by, view)
	}); err != nil {
		v.logger.Warn("tokenvault: the end of an asynchronous reactor invocation emitted no event", "event", typ, "err", err)
	}
}
