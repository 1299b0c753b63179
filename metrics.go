package tokenvault

import (
	"errors"
	"time"

	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/reactors"
)

// Metrics receives counts and timings of the Vault's work, for a monitoring
// system; Options.Metrics sets it, and package prommetrics implements it
// for Prometheus. The Vault itself depends on no monitoring library.
//
// Every argument is a number, a duration or one of the small fixed sets of
// values declared below: never a tenant, token, key, id or anything a
// caller sent, so that an implementation may use them as metric labels
// without the number of series growing with the data.
//
// The Vault calls these methods on its request paths (Tokens once per
// committed transaction that touched tokens): they must be cheap, safe for
// concurrent use, and must not call the Vault. Methods may be added to this
// interface in later versions; embed an existing implementation to keep up.
type Metrics interface {
	// Tokens reports n token operations of kind op, once the transaction
	// they were part of has committed (never for one that rolled back).
	Tokens(op TokenOp, n int)
	// CodeRun reports one run of tenant code (a reactor, a transform)
	// and how long it took, waiting for a worker included.
	CodeRun(kind CodeKind, outcome CodeOutcome, d time.Duration)
	// WebhookDelivered reports the end of one webhook delivery, after
	// attempts POSTs (0 when none was sent).
	WebhookDelivered(outcome WebhookOutcome, attempts int)
	// Swept reports n objects of kind the sweeper removed (or, for
	// invitations, marked EXPIRED) in one committed transaction.
	Swept(kind SweepKind, n int)
	// SweepDone reports one run of Sweep (by the background sweeper or a
	// host) and how long it took; err is nil when it finished its work.
	SweepDone(d time.Duration, err error)
	// StoreCommit reports one commit of a write transaction of the bbolt
	// store the Vault opened itself (Options.Path): how many Updates it
	// carried (a batch coalesces concurrent ones) and how long the commit
	// took (writing and fsync). For a Store given in Options.Store, pass
	// this method to that store's own hook (bolt.Options.OnCommit).
	StoreCommit(updates int, d time.Duration)
	// AuditExported reports one delivery of n audit events to the audit
	// sink named sink (Options.AuditExport.Sinks; its name is a constant the
	// operator chose, never tenant data), and its error (nil: delivered).
	// The lag itself is in Stats.AuditExport.
	AuditExported(sink string, n int, err error)
	// EventDelivery reports one attempt to deliver an event to a webhook
	// subscription (internal/events' dispatch.go) and how it ended; lag, for
	// EventDelivered only, is from the event's commit to the receiver's
	// acknowledgement.
	EventDelivery(outcome EventOutcome, lag time.Duration)
	// WebhookAutoDisabled reports a webhook the Vault disabled: reason is
	// "gone" (the receiver answered 410) or "failing" (no success for
	// WebhookOptions.DisableAfter).
	WebhookAutoDisabled(reason string)
}

// EventOutcome is how one attempt to deliver an event ended, for
// Metrics.EventDelivery.
type EventOutcome = events.Outcome

// Event outcomes (internal/events).
const (
	EventDelivered = events.Delivered
	EventRetried   = events.Retried
	EventFailed    = events.Failed
	EventGone      = events.Gone
	EventDropped   = events.Dropped
)

// EventOutcomes lists every EventOutcome.
func EventOutcomes() []EventOutcome {
	return []EventOutcome{EventDelivered, EventRetried, EventFailed, EventGone, EventDropped}
}

// TokenOp is what was done to tokens, for Metrics.Tokens.
type TokenOp string

const (
	// TokensCreated: tokens created (Tokenize, CreateToken, tokenize in a
	// reactor's result or through req.client).
	TokensCreated TokenOp = "created"
	// TokensRead: tokens whose data a caller read: GetToken, each token
	// of a list or search page that carries data, and the existing token a
	// deduplicating create returned.
	TokensRead TokenOp = "read"
	// TokensUpdated: UpdateToken.
	TokensUpdated TokenOp = "updated"
	// TokensDeleted: DeleteToken (expired tokens removed by the sweeper are
	// Swept, not counted here).
	TokensDeleted TokenOp = "deleted"
	// TokensDetokenized: distinct tokens a Detokenize call, or the
	// arguments of a reactor invocation, expanded.
	TokensDetokenized TokenOp = "detokenized"
)

// TokenOps lists every TokenOp.
func TokenOps() []TokenOp {
	return []TokenOp{TokensCreated, TokensRead, TokensUpdated, TokensDeleted, TokensDetokenized}
}

// CodeKind is what tenant code ran as, for Metrics.CodeRun.
type CodeKind string

const (
	CodeReactor   CodeKind = "reactor"   // a reactor (formula-based or not)
	CodeTransform CodeKind = "transform" // a proxy's request or response transform
)

// CodeKinds lists every CodeKind.
func CodeKinds() []CodeKind { return []CodeKind{CodeReactor, CodeTransform} }

// CodeOutcome is how a run of tenant code ended, for Metrics.CodeRun.
type CodeOutcome string

const (
	CodeOK      CodeOutcome = "ok"      // the code returned
	CodeError   CodeOutcome = "error"   // the code threw (or failed in the runtime)
	CodeTimeout CodeOutcome = "timeout" // stopped at its deadline, or canceled
	CodeMemory  CodeOutcome = "memory"  // its worker ran out of memory
	CodeCrash   CodeOutcome = "crash"   // its worker died otherwise
	// CodeUnavailable: nothing ran: no worker was free in time (the
	// tenant's or every worker), the Vault was closing, or a worker could
	// not start.
	CodeUnavailable CodeOutcome = "unavailable"
)

// CodeOutcomes lists every CodeOutcome.
func CodeOutcomes() []CodeOutcome {
	return []CodeOutcome{CodeOK, CodeError, CodeTimeout, CodeMemory, CodeCrash, CodeUnavailable}
}

// WebhookOutcome is how a webhook delivery ended, for
// Metrics.WebhookDelivered.
type WebhookOutcome = reactors.CallbackOutcome

const (
	WebhookOK       = reactors.CallbackDelivered // the receiver answered 2xx
	WebhookFailed   = reactors.CallbackFailed    // every attempt failed
	WebhookCanceled = reactors.CallbackCanceled  // the Vault closed before it succeeded
	WebhookNotSent  = reactors.CallbackNotSent   // its signing secret could not be read
)

// WebhookOutcomes lists every WebhookOutcome.
func WebhookOutcomes() []WebhookOutcome {
	return []WebhookOutcome{WebhookOK, WebhookFailed, WebhookCanceled, WebhookNotSent}
}

// SweepKind is what the sweeper removed, for Metrics.Swept.
type SweepKind string

const (
	SweptApplications SweepKind = "application"  // expired applications, deleted
	SweptTokens       SweepKind = "token"        // expired tokens, deleted
	SweptSessions     SweepKind = "session"      // expired sessions, deleted
	SweptInvitations  SweepKind = "invitation"   // expired invitations, marked EXPIRED
	SweptIdempotency  SweepKind = "idempotency"  // idempotency records past their window
	SweptCVCs         SweepKind = "cvc"          // card cvcs past Options.Retention.CVC
	SweptLogs         SweepKind = "log"          // audit log lines past Options.Retention.Logs
	SweptTokenIntents SweepKind = "token_intent" // expired token intents, deleted
	SweptApprovals    SweepKind = "approval"     // pending changes past their expiry, marked expired
)

// SweepKinds lists every SweepKind.
func SweepKinds() []SweepKind {
	return []SweepKind{SweptApplications, SweptTokens, SweptSessions, SweptInvitations, SweptIdempotency, SweptCVCs, SweptLogs, SweptTokenIntents, SweptApprovals}
}

// Stats are the Vault's gauges at one instant, for a collector to read
// when it is scraped.
type Stats struct {
	// CodeWorkers is the sandbox worker processes alive, idle or busy
	// (0 with Options.Code.TrustedInProcess).
	CodeWorkers int
	// CodeWorkersBusy is the runs and checks of code holding a worker
	// slot now.
	CodeWorkersBusy int
	// CodeWorkersMax is Options.Code.Workers as resolved (16 by default).
	CodeWorkersMax int
	// AsyncInvocations is the asynchronous reactor invocations waiting for
	// a worker or running.
	AsyncInvocations int
	// PendingWebhooks is the webhooks being delivered, retries included.
	PendingWebhooks int
	// PendingEventDeliveries is the deliveries of events to webhook
	// subscriptions pending (queued or waiting for a retry), as this
	// instance counts them (internal/events' pending.go): those of the webhooks it
	// queued to since it started, counted from the store.
	PendingEventDeliveries int
	// AuditExport is the export lag of each of Options.AuditExport.Sinks, in
	// their order (nil without sinks).
	AuditExport []AuditExportStats
	// AuditChain is the audit chain's backlog: lines committed and not
	// linked yet (chain_linker.go).
	AuditChain AuditChainStats
	// Denials is what the audit lines of denied calls leave out
	// (denied.go).
	Denials DenialStats
}

// Stats returns the Vault's gauges. It takes no store transaction and is
// cheap enough to call on every scrape.
func (v *Vault) Stats() Stats {
	workers, busy, capacity := v.code.Stats()
	running, delivering := v.async.Stats()
	return Stats{CodeWorkers: workers, CodeWorkersBusy: busy, CodeWorkersMax: capacity,
		AsyncInvocations: running, PendingWebhooks: delivering,
		PendingEventDeliveries: v.dispatch.Pending().Total(), AuditExport: v.auditStats(),
		AuditChain: v.chainStats(), Denials: v.denials.stats()}
}

// tally counts what one transaction did to tokens and what it swept, for
// Options.Metrics: update reports it only once the transaction commits,
// and a transaction run again (a batch retried) starts from zero, in a new
// txn.
type tally struct {
	created, read, updated, deleted, detokenized int
	swept                                        map[SweepKind]int // nil unless the sweeper ran
}

// measured returns the transaction's tally, made on first use; nil when
// the Vault has no Metrics.
func (t *txn) measured() *tally {
	if t.v.metrics == nil {
		return nil
	}
	return tallies.of(t)
}

// tallies is each transaction's tally, reported once it commits.
var tallies = &txnLocal[tally]{finish: func(t *txn, c *tally, committed bool) {
	if committed {
		c.report(t.v.metrics)
	}
}}

// count counts one token operation of kind op.
func (t *txn) count(op TokenOp) {
	c := t.measured()
	if c == nil {
		return
	}
	switch op {
	case TokensCreated:
		c.created++
	case TokensRead:
		c.read++
	case TokensUpdated:
		c.updated++
	case TokensDeleted:
		c.deleted++
	case TokensDetokenized:
		c.detokenized++
	}
}

// sweptOne counts one object of kind the sweeper removed.
func (t *txn) sweptOne(kind SweepKind) {
	c := t.measured()
	if c == nil {
		return
	}
	if c.swept == nil {
		c.swept = map[SweepKind]int{}
	}
	c.swept[kind]++
}

// report hands a committed transaction's tally to m.
func (c *tally) report(m Metrics) {
	for _, x := range [...]struct {
		op TokenOp
		n  int
	}{{TokensCreated, c.created}, {TokensRead, c.read}, {TokensUpdated, c.updated}, {TokensDeleted, c.deleted}, {TokensDetokenized, c.detokenized}} {
		if x.n > 0 {
			m.Tokens(x.op, x.n)
		}
	}
	for kind, n := range c.swept {
		if n > 0 {
			m.Swept(kind, n)
		}
	}
}

// codeOutcome classifies the error of a run of code (after codeError).
func codeOutcome(err error) CodeOutcome {
	if err == nil {
		return CodeOK
	}
	var e *Error
	if !errors.As(err, &e) {
		return CodeUnavailable
	}
	switch {
	case e.Kind == CodeFailed && e.Stop == CodeTimedOut:
		return CodeTimeout
	case e.Kind == CodeFailed && e.Stop == CodeOutOfMemory:
		return CodeMemory
	case e.Kind == CodeFailed && e.Stop == CodeCrashed:
		return CodeCrash
	case e.Kind == Unavailable || e.Kind == Internal:
		// No worker in time, the Vault closing, or a worker that could
		// not start: nothing ran.
		return CodeUnavailable
	}
	return CodeError
}
