package access

import (
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// RevealCounter is the circuit breaker's count of reveals. An application's RevealBudget bounds
// the distinct tokens its keys, and the sessions it authorized, may read
// with their data revealed per window; past it a reveal is masked (or
// refused, ErrRevealBudget), access.anomaly fires once per window, and
// with Freeze the application is frozen (ErrKeyFrozen) until a manager
// releases it (UnfreezeApplication).
//
// Where the count lives. A reveal is a read, and a read writes only its
// own log line (DESIGN.md, Writes): a per-application counter row written
// by every reveal would serialize every reader of the application, on
// every store. So the count is kept in this process's memory, as the
// rate limits are (the root's ratelimit.go): per application, the set of distinct
// token ids revealed since its window began. A store is written only when
// a window's budget is crossed: one transaction, after the call that
// crossed it, writes the freeze (with Freeze), the audit line and the
// event. The limits of that choice:
//
//   - Vaults that share a PostgreSQL store count apart: behind N
//     instances an application may reveal up to N times its budget per
//     window before each has tripped (each trips, fires and freezes on
//     its own). A freeze, being stored, stops the key on every instance.
//   - The window is fixed (it starts at the first reveal counted, and a
//     new one at the first reveal after it ends), and a restart begins
//     every window again.
//   - A reveal is counted when it is decided, so a call that fails after
//     it still counts it: the budget bounds attempts as well as answers.
//   - The memory is bounded by the budgets: at most Tokens ids per
//     application with a budget that revealed in its window; windows that
//     ended are dropped as others are made.
//
// A token already counted in the window is revealed again without
// counting (a budget of distinct tokens, as a support agent reopening one
// record needs); changing an application's budget begins its window
// again; releasing it (UnfreezeApplication) forgets its window on the
// instance that released it.
type RevealCounter struct {
	mu sync.Mutex
	// windows holds the window of each application with a budget that
	// revealed, by tenant/application id.
	windows map[string]*revealWindow
	// pruneAt is the size of windows at which ended ones are dropped.
	pruneAt int
}

// revealWindow is one application's current window.
type revealWindow struct {
	start  time.Time
	budget RevealBudget
	seen   map[string]struct{}
	// trippedBy is the call that crossed the budget in this window (nil
	// before): its transaction runs, and only they, report the trip.
	trippedBy *unit.CallInfo
}

// Count counts id in the window of holder, whose budget is b, for call,
// at now: whether it may be revealed, and whether call crossed the budget.
func (br *RevealCounter) Count(holder string, b RevealBudget, id string, call *unit.CallInfo, now time.Time) (ok, tripped bool) {
	br.mu.Lock()
	defer br.mu.Unlock()
	w := br.windows[holder]
	if w == nil || w.budget != b || !now.Before(w.start.Add(b.Duration())) {
		if br.windows == nil {
			br.windows = map[string]*revealWindow{}
		}
		br.prune(now)
		w = &revealWindow{start: now, budget: b, seen: map[string]struct{}{}}
		br.windows[holder] = w
	}
	if _, ok := w.seen[id]; ok {
		return true, false
	}
	if len(w.seen) < b.Tokens {
		w.seen[id] = struct{}{}
		return true, false
	}
	if w.trippedBy == nil {
		w.trippedBy = call
	}
	return false, w.trippedBy == call
}

// prune drops the windows that ended once there are twice as many as
// after the last pruning (so pruning costs O(1) per window made).
func (br *RevealCounter) prune(now time.Time) {
	if len(br.windows) < br.pruneAt {
		return
	}
	for k, w := range br.windows {
		if !now.Before(w.start.Add(w.budget.Duration())) {
			delete(br.windows, k)
		}
	}
	br.pruneAt = max(64, 2*len(br.windows))
}

// Untrip lets the next reveal past holder's budget report the trip again
// (the transaction that reported it failed).
func (br *RevealCounter) Untrip(holder string, call *unit.CallInfo) {
	br.mu.Lock()
	defer br.mu.Unlock()
	if w := br.windows[holder]; w != nil && w.trippedBy == call {
		w.trippedBy = nil
	}
}

// Forget drops holder's window (its application was released).
func (br *RevealCounter) Forget(holder string) {
	br.mu.Lock()
	defer br.mu.Unlock()
	delete(br.windows, holder)
}
