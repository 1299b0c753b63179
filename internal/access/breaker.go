package access

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// The circuit breaker on reveals, as applications hold it: the budget an
// application is given (RevealBudget, validated by Grant.budget) and the
// freeze the breaker or a decoy puts on it (Freeze). RevealCounter
// (reveal_counter.go) counts reveals against the budget; reporting a trip
// and freezing are the root's (breaker.go).

// Actions of a reveal budget: what a reveal past the budget does.
const (
	// BudgetMask shows the token masked instead (the default).
	BudgetMask = "mask"
	// BudgetRefuse refuses the read with ErrRevealBudget.
	BudgetRefuse = "refuse"
)

// Bounds of a reveal budget.
const (
	MaxBudgetTokens = 1_000_000
	MinBudgetWindow = time.Minute
	MaxBudgetWindow = 31 * 24 * time.Hour
)

// RevealBudget bounds the distinct tokens an application's keys (and the
// sessions it authorized) may read with their data revealed per window.
type RevealBudget struct {
	// Tokens is how many distinct tokens may be revealed per window, 1
	// to 1,000,000. In an update, 0 removes the budget.
	Tokens int `json:"tokens"`
	// Window is the window's length, a Go duration from "1m" to "744h"
	// ("1h", "24h").
	Window string `json:"window"`
	// Action is what a reveal past the budget does: "mask" (the default:
	// the token is shown masked) or "refuse" (the read fails with
	// PermissionDenied).
	Action string `json:"action,omitempty"`
	// Freeze, when true, also freezes the application's keys when the
	// budget is crossed, until a manager releases them.
	Freeze bool `json:"freeze,omitempty"`
}

// Duration is b's window, parsed (b was validated).
func (b *RevealBudget) Duration() time.Duration {
	d, _ := time.ParseDuration(b.Window)
	return d
}

// Refuses reports whether a reveal past b fails rather than masks.
func (b *RevealBudget) Refuses() bool { return b.Action == BudgetRefuse }

// checkBudget validates b at path, adding to fe, and returns it
// normalized (action filled in, nil for a budget of 0 tokens).
func checkBudget(b *RevealBudget, path string, fe unit.FieldErrors) *RevealBudget {
	if b == nil || b.Tokens == 0 {
		return nil
	}
	out := *b
	if out.Tokens < 0 || out.Tokens > MaxBudgetTokens {
		fe.Add(path+".tokens", "must be from 1 to %d (0 removes the budget)", MaxBudgetTokens)
	}
	d, err := time.ParseDuration(out.Window)
	switch {
	case err != nil:
		fe.Add(path+".window", "must be a duration such as \"1h\" or \"24h\"")
	case d < MinBudgetWindow || d > MaxBudgetWindow:
		fe.Add(path+".window", "must be from 1m to 744h")
	default:
		out.Window = d.String()
	}
	switch out.Action {
	case "":
		out.Action = BudgetMask
	case BudgetMask, BudgetRefuse:
	default:
		fe.Add(path+".action", "must be mask or refuse")
	}
	return &out
}

// budget is the reveal budget g gives an application that has keep: keep
// when g has none, none when g's has 0 tokens, g's validated otherwise.
func (g Grant) budget(keep *RevealBudget, fe unit.FieldErrors) *RevealBudget {
	if g.RevealBudget == nil {
		return keep
	}
	return checkBudget(g.RevealBudget, "reveal_budget", fe)
}

// Freeze is an application's frozen state: since when and why. A frozen
// application's keys, the sessions it authorized or created, and its
// reactors and proxies are refused (ErrKeyFrozen) until a manager
// releases it (Unfreeze).
type Freeze struct {
	At time.Time
	// Reason says what froze it: FrozenBudget or FrozenDecoy.
	Reason string
}

// Reasons of a freeze.
const (
	FrozenBudget = "reveal_budget"
	FrozenDecoy  = "decoy"
)

// ErrKeyFrozen is the error of every call of a frozen application's key,
// of a session it authorized or created, and of its reactors and proxies:
// PermissionDenied (errors.Is(err, ErrPermissionDenied) holds too).
var ErrKeyFrozen = &unit.Error{Kind: unit.PermissionDenied,
	Message: "the key is frozen by the circuit breaker on reveals; a manager must release it (POST /applications/{id}/unfreeze)"}

// ErrRevealBudget is the error of a reveal past the reveal budget of an
// application whose budget refuses: PermissionDenied.
var ErrRevealBudget = &unit.Error{Kind: unit.PermissionDenied,
	Message: "the application's reveal budget for this window is used up"}

// usable is nil unless app is frozen (ErrKeyFrozen).
func usable(app *ApplicationRecord) error {
	if app.Frozen != nil {
		return ErrKeyFrozen
	}
	return nil
}

// CheckUsable is nil unless app is frozen (ErrKeyFrozen): sessions check
// the applications they act through with it.
func CheckUsable(app *ApplicationRecord) error { return usable(app) }

// BudgetHolder is the application whose reveal budget p's reveals count
// against: its own for an application, its authorizer for a session.
func (p *Principal) BudgetHolder() string {
	if p.AppID != "" {
		return p.AppID
	}
	return p.ActorID
}
