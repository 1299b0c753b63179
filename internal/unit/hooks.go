package unit

// After-commit hooks. A feature that must act once a write transaction
// has ended (report its tallies, tell the audit exporters, settle the
// fingerprint index, wake the log indexer, void the auth cache) registers
// a hook on the Tx instead of keeping a field on it; a feature that
// gathers state over the transaction first keeps it in a Local, made on
// first use with its hook. The hooks of a run the store discards (it may
// run a transaction function again) are discarded with it: only those of
// the last run run. A read-only transaction (View) runs none.

// OnFinish has fn called when t's write transaction has ended: committed
// or not (a backend may fail after writing, so some features act on
// failure too).
func (t *Tx) OnFinish(fn func(committed bool)) { t.hooks = append(t.hooks, fn) }

// AfterCommit has fn called once t's write transaction has committed.
func (t *Tx) AfterCommit(fn func()) {
	t.OnFinish(func(committed bool) {
		if committed {
			fn()
		}
	})
}

// finished runs t's hooks, in the order they were registered.
func (t *Tx) finished(committed bool) {
	for _, fn := range t.hooks {
		fn(committed)
	}
}

// Local is a feature's state in one transaction: a *T made on the first
// use in a Tx (Of), when the feature's finish hook, if any, is registered
// with it. Declare one per feature as a package variable.
type Local[T any] struct {
	// Finish, if set, is called with the state when the transaction ends.
	Finish func(t *Tx, state *T, committed bool)
}

// localValue is one Local's state in a Tx.
type localValue struct {
	key   any // the *Local
	state any // its *T
}

// Of returns l's state in t, made (and its hook registered) on first use.
// A transaction holds a handful of locals, so a scan finds one.
func (l *Local[T]) Of(t *Tx) *T {
	if s, ok := l.Peek(t); ok {
		return s
	}
	s := new(T)
	t.locals = append(t.locals, localValue{key: l, state: s})
	if l.Finish != nil {
		t.OnFinish(func(committed bool) { l.Finish(t, s, committed) })
	}
	return s
}

// Peek returns l's state in t if a use made it, without making it.
func (l *Local[T]) Peek(t *Tx) (*T, bool) {
	for _, e := range t.locals {
		if e.key == l {
			return e.state.(*T), true
		}
	}
	return nil, false
}
