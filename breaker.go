package tokenvault

import (
	"context"
	"fmt"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The circuit breaker on reveals: an application's RevealBudget bounds
// the distinct tokens its keys, and the sessions it authorized, may read
// revealed per window (access.RevealCounter counts them, in this
// process's memory: where the count lives and its limits are in its doc).
// Past it a reveal is masked (or refused, ErrRevealBudget), access.anomaly
// fires once per window, and with Freeze the application is frozen
// (ErrKeyFrozen) until a manager releases it (UnfreezeApplication). The
// root holds what needs the Vault: the gate the tokens ask, and the
// transaction that reports a trip or a decoy read.

// revealGate is the Vault's tokens.RevealGate.
type revealGate struct{ v *Vault }

// Reveal counts token id against the budget of p's application and
// reports whether it may be shown revealed; with a refusing budget, a
// reveal past it is ErrRevealBudget.
func (g revealGate) Reveal(t *unit.Tx, p *access.Principal, id string) (bool, error) {
	b := p.RevealBudget
	if b == nil {
		return true, nil
	}
	ok, tripped := g.v.breaker.Count(p.TenantID+"/"+p.BudgetHolder(), *b, id, unit.CallOf(t.Ctx), t.Now)
	if ok {
		return true, nil
	}
	if tripped {
		tripLocal.of(&txn{Tx: t, v: g.v}).p = p
	}
	if b.Refuses() {
		return false, access.ErrRevealBudget
	}
	return false, nil
}

// tripState is what a transaction reports once it ends: the principal
// whose reveal crossed its budget (nil: none), and the decoys read.
type tripState struct {
	p      *access.Principal
	decoys []decoyHit
}

// decoyHit is one decoy read in a transaction.
type decoyHit struct {
	p      *access.Principal
	id     string
	freeze bool
}

// DecoyRead notes that p read decoy id, to report once the transaction
// ends (tripLocal).
func (g revealGate) DecoyRead(t *unit.Tx, p *access.Principal, id string, freeze bool) {
	s := tripLocal.of(&txn{Tx: t, v: g.v})
	s.decoys = append(s.decoys, decoyHit{p: p, id: id, freeze: freeze})
}

// tripLocal reports a trip and the decoys read once the transaction that
// made them has ended, committed or not (a refused read fails its
// transaction), in a transaction of its own, so that the refusal does not
// undo it. A decoy read is reported however its call ends: reading it was
// the anomaly.
var tripLocal = txnLocal[tripState]{finish: func(t *txn, s *tripState, _ bool) {
	ctx := context.WithoutCancel(t.Ctx)
	if p := s.p; p != nil {
		call := unit.CallOf(t.Ctx)
		if err := t.v.reportAnomaly(ctx, p, access.FrozenBudget, "", false); err != nil {
			t.v.breaker.Untrip(p.TenantID+"/"+p.BudgetHolder(), call)
			t.v.logger.Error("tokenvault: recording a crossed reveal budget", "tenant", p.TenantID, "application", p.BudgetHolder(), "error", err)
		}
	}
	for _, d := range s.decoys {
		if err := t.v.reportAnomaly(ctx, d.p, access.FrozenDecoy, d.id, d.freeze); err != nil {
			t.v.logger.Error("tokenvault: recording a decoy read", "tenant", d.p.TenantID, "application", d.p.BudgetHolder(), "error", err)
		}
	}
}}

// reportAnomaly records, in a transaction of its own, that p's
// application crossed its reveal budget (reason FrozenBudget: frozen if
// its budget says so) or read decoy tokenID (FrozenDecoy: frozen if
// freeze): the audit line, access.anomaly, and the freeze.
func (v *Vault) reportAnomaly(ctx context.Context, p *access.Principal, reason, tokenID string, freeze bool) error {
	return v.update(unit.WithCallInfo(ctx, new(unit.CallInfo)), func(t *txn) error {
		app, err := access.LoadApplication(t.Tx, p.TenantID, p.BudgetHolder())
		if err != nil || app == nil {
			return err // deleted meanwhile: nothing left to freeze
		}
		a := events.Anomaly{ApplicationID: app.ID, ApplicationName: app.Name, Reason: reason, TokenID: tokenID}
		if p.ActorType == ActorSession {
			a.SessionID = p.ActorID
		}
		msg := "Decoy token read"
		if b := app.RevealBudget; reason == access.FrozenBudget {
			if b == nil {
				return nil // the budget was removed meanwhile
			}
			a.Tokens, a.Window, a.Action, freeze = b.Tokens, b.Window, b.Action, b.Freeze
			msg = fmt.Sprintf("Reveal budget crossed: more than %d tokens in %s", a.Tokens, a.Window)
		}
		if freeze && app.Frozen == nil {
			app.Frozen = &access.Freeze{At: t.Now, Reason: reason}
			if err := t.PutRecord(barrier.Tenant(app.TenantID).Record(EntityApplication, app.ID), app); err != nil {
				return err
			}
			msg += "; key frozen"
		}
		a.Frozen = app.Frozen != nil
		if err := events.EmitAnomaly(t.Tx, p.Actor(), app.TenantID, a); err != nil {
			return err
		}
		return t.Log(p.Actor(), app.TenantID, EntityApplication, app.ID, OpUpdate, msg)
	})
}

// UnfreezeApplication releases an application frozen by the circuit
// breaker on reveals (see [RevealBudget]): its keys, sessions, reactors
// and proxies work again, and its reveal window begins again on this
// instance. Requires application:update, and for a management application
// every permission it holds. Releasing an application that is not frozen
// changes nothing and is not an error.
//
// Returns NotFound for an application that is not the caller's tenant's,
// PermissionDenied without the permissions above; like every call with a
// key, Unauthenticated, RateLimited, StorageFull and Internal.
func (v *Vault) UnfreezeApplication(ctx context.Context, key Credential, id string) (*Application, error) {
	var out *Application
	released := false
	err := v.update(ctx, func(t *txn) error {
		released = false
		p, err := t.authorize(key, PermApplicationUpdate)
		if err != nil {
			return err
		}
		rec, err := access.MustApplication(t.Tx, p.TenantID, id)
		if err != nil {
			return err
		}
		if rec.Type == access.Management && !p.Covers(rec.Permissions) {
			return unit.Errorf(unit.PermissionDenied, "a management application can only be released by a key holding all its permissions")
		}
		out = applicationOf(rec)
		if rec.Frozen == nil {
			return nil
		}
		now := t.Now
		rec.Frozen, rec.ModifiedBy, rec.ModifiedAt = nil, p.ActorID, &now
		if err := t.PutRecord(barrier.Tenant(p.TenantID).Record(EntityApplication, id), rec); err != nil {
			return err
		}
		if err := (events.Applications{}).Updated(t.Tx, p.Actor(), rec); err != nil {
			return err
		}
		out, released = applicationOf(rec), true
		return t.Log(p.Actor(), p.TenantID, EntityApplication, id, OpUpdate, "Application released from freeze")
	})
	if err != nil {
		return nil, err
	}
	if released {
		v.breaker.Forget(out.TenantID + "/" + id)
	}
	return out, nil
}

// RevealBudget bounds the distinct tokens an application's keys, and the
// sessions it authorized, may read with their data revealed per window:
// Tokens (1 to 1,000,000), Window (a Go duration, "1m" to "744h"), Action
// ("mask", the default, or "refuse") and Freeze. See the circuit breaker
// on reveals in docs/security.md.
type RevealBudget = access.RevealBudget

// Actions of a RevealBudget.
const (
	BudgetMask   = access.BudgetMask
	BudgetRefuse = access.BudgetRefuse
)

// ErrKeyFrozen is the error of every call of a frozen application's key,
// of the sessions it created or authorized, and of its reactors' and
// proxies' calls, until UnfreezeApplication: PermissionDenied (403), with
// errors.Is(err, ErrKeyFrozen) telling it apart.
var ErrKeyFrozen = access.ErrKeyFrozen

// Problem types of the circuit breaker's errors: over HTTP, package
// httpapi answers ErrKeyFrozen and ErrRevealBudget as 403 problems of
// these types, and package client turns them back into the same errors,
// so that errors.Is holds for a remote caller as in process. Tag URIs, as
// CodeFailedProblemType.
const (
	KeyFrozenProblemType    = "tag:tokenvault,2026:key-frozen"
	RevealBudgetProblemType = "tag:tokenvault,2026:reveal-budget"
)

// ErrRevealBudget is the error of a reveal past a refusing reveal budget:
// PermissionDenied (403), errors.Is(err, ErrRevealBudget) telling it
// apart.
var ErrRevealBudget = access.ErrRevealBudget
