package tokenvault

// After-commit hooks. A feature that must act once a write transaction
// has ended (report its tallies, tell the audit exporters, settle the
// fingerprint index, wake the log indexer, void the auth cache) registers
// a hook on the txn instead of keeping a field on it; a feature that
// gathers state over the transaction first keeps it in a txnLocal, made
// on first use with its hook. The hooks of a run the store discards (it
// may run a transaction function again) are discarded with it: only
// those of the last run run. A read-only transaction (view) runs none.

// onFinish has fn called when t's write transaction has ended: committed
// or not (a backend may fail after writing, so some features act on
// failure too).
func (t *txn) onFinish(fn func(committed bool)) { t.hooks = append(t.hooks, fn) }

// afterCommit has fn called once t's write transaction has committed.
func (t *txn) afterCommit(fn func()) {
	t.onFinish(func(committed bool) {
		if committed {
			fn()
		}
	})
}

// finished runs t's hooks, in the order they were registered.
func (t *txn) finished(committed bool) {
	for _, fn := range t.hooks {
		fn(committed)
	}
}

// txnLocal is a feature's state in one transaction: a *T made on the
// first use in a txn (of), when the feature's finish hook, if any, is
// registered with it.
type txnLocal[T any] struct {
	finish func(t *txn, state *T, committed bool)
}

// txnLocalValue is one txnLocal's state in a txn.
type txnLocalValue struct {
	key   any // the *txnLocal
	state any // its *T
}

// of returns l's state in t, made (and its hook registered) on first use.
// A transaction holds a handful of locals, so a scan finds one.
func (l *txnLocal[T]) of(t *txn) *T {
	for _, e := range t.locals {
		if e.key == l {
			return e.state.(*T)
		}
	}
	s := new(T)
	t.locals = append(t.locals, txnLocalValue{key: l, state: s})
	if l.finish != nil {
		t.onFinish(func(committed bool) { l.finish(t, s, committed) })
	}
	return s
}
