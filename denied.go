package tokenvault

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/tokenvault/tokenvault/internal/ratelimit"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Denied calls in the audit log (docs/audit.md, "Denied requests").
//
// A call refused for its key is written to the log of the key's tenant
// as a line of its own, operation OpDenied (outcome "denied"): a 403
// (PermissionDenied: a permission or a container the key lacks, a
// frozen application, a refused reveal), and a 401 or the failed-
// authentication throttle's 429 when the presented key is one the store
// knows (an expired or frozen application's, a deleted application's
// whose lookup remains, an expired session's). The line's actor is the
// key's application or session (never the key), its entity the same,
// and its message the route (CallInfo.Route) or the Vault method, the
// client address, and the error's message: messages of PermissionDenied
// and Unauthenticated errors name permissions, containers and states,
// never token data or keys.
//
// The refused call's own transaction failed, so the line is written
// after it, in a transaction of its own (the Ended hook of every unit of
// work), once per call (CallInfo.MarkDenied). Writing it never changes
// the call's answer: a failure to write is logged to the server's log.
//
// A key the store does not know belongs to no tenant: such a call goes
// to the server's log (a warning with the address and route, no part of
// the key; bounded as a tenant's lines are, with one summary a minute
// past the bound) and is counted in Stats.Denials.UnknownKey.
//
// A flood is bounded per tenant and per instance
// (Options.Limits.DeniedLinesPerMinute, a token bucket per tenant in
// this process's memory, ratelimit.Flood): past it, denied calls are
// counted, not written, and the tenant's next denied call a minute or
// more after the first one held writes one line saying how many were
// not. One tenant's flood touches no other tenant's bucket or log. Within
// a tenant, each key (application or session) has a bucket of its own of
// a quarter of the tenant's (at least 1 line a minute), taken before the
// tenant's: one key's flood is counted against that key only (its own
// summary line, a minute on), so it cannot use up the tenant's bound and
// silence the refusals of its other keys; only several keys flooding at
// once can.

// DefaultDeniedLinesPerMinute is Options.Limits.DeniedLinesPerMinute's
// zero value: denied lines written per tenant, minute and instance (and
// at once).
const DefaultDeniedLinesPerMinute = 100

// maxDeniedTenants bounds the tenants (and, apart, the keys) whose held
// denied calls are counted at once; refusals of more are counted in
// Stats.Denials.Lost only.
const maxDeniedTenants = 10000

// DenialStats is what the denied-call lines leave out, since this Vault
// opened, for Stats.
type DenialStats struct {
	// UnknownKey counts denied calls whose key no tenant holds (written
	// to the server's log, not to any tenant's).
	UnknownKey int64
	// Lost counts denied calls past the bound while maxDeniedTenants
	// (10,000) tenants already had some held: in no line.
	Lost int64
}

// denials is the Vault's state of denied calls.
type denials struct {
	flood *ratelimit.Flood
	// keyFlood bounds each key's lines within its tenant's (by
	// "<tenant>/<actor id>"), a quarter of flood's.
	keyFlood *ratelimit.Flood
	// unknownLog bounds the server's log lines of calls with keys no
	// tenant holds, as flood bounds a tenant's (one name for all).
	unknownLog *ratelimit.Flood
	bound      int // lines a minute per tenant; 0: no bound
	unknown    atomic.Int64
}

func newDenials(opts Options) *denials {
	n := opts.Limits.DeniedLinesPerMinute
	if n == 0 {
		n = DefaultDeniedLinesPerMinute
	}
	return &denials{flood: ratelimit.NewFlood(n, maxDeniedTenants), keyFlood: ratelimit.NewFlood(max(n/4, 1), maxDeniedTenants),
		unknownLog: ratelimit.NewFlood(n, 1), bound: max(n, 0)}
}

// denialWrite marks the context of the transaction that writes a denied
// line, whose own failure is not a denial to record.
type denialWrite struct{}

// denied is the Ended hook of every unit of work: it records the call of
// ctx, which ended with err, if err is a denial.
func (v *Vault) denied(ctx context.Context, err error) {
	kind := unit.ErrorKind(err)
	if kind != PermissionDenied && kind != Unauthenticated && kind != RateLimited {
		return
	}
	if ctx.Value(denialWrite{}) != nil {
		return
	}
	info := unit.CallFrom(ctx)
	if info == nil {
		return
	}
	s := info.Subject()
	switch {
	case s == nil && kind == PermissionDenied:
		return // refused before any key was read (an operator's call)
	case s == nil:
		if info.MarkDenied() {
			v.denials.unknown.Add(1)
			// The server's log is bounded like a tenant's: one bucket
			// for every such call.
			ok, held := v.denials.unknownLog.Admit("", v.now())
			if held > 0 {
				v.logger.Warn("tokenvault: calls with keys no tenant holds not logged over the last minute or more",
					"count", held, "bound_per_minute", v.denials.bound)
			}
			if ok {
				v.logger.Warn("tokenvault: denied a call with a key no tenant holds",
					"route", routeOf(info), "client_address", info.ClientAddress, "status", statusOf(kind))
			}
		}
		return
	case kind != PermissionDenied && s.Failure == "":
		return // a key's or tenant's call limit: load, not a denial
	}
	if !info.MarkDenied() {
		return
	}
	route := routeOf(info)
	reason := unit.MessageOf(err)
	if kind != PermissionDenied {
		reason = s.Failure
		if kind == RateLimited {
			reason += "; failed authentications from this address throttled"
		}
	}
	now := v.now()
	ok, keyHeld := v.denials.keyFlood.Admit(s.TenantID+"/"+s.Actor.ID, now)
	held := 0
	if ok {
		ok, held = v.denials.flood.Admit(s.TenantID, now)
	}
	if !ok && held == 0 && keyHeld == 0 {
		return
	}
	wctx := context.WithValue(unit.WithCallInfo(context.WithoutCancel(ctx), new(unit.CallInfo)), denialWrite{}, true)
	werr := v.update(wctx, func(t *txn) error {
		if keyHeld > 0 {
			msg := fmt.Sprintf("%d denied calls of this key not logged over the last minute or more: past the bound of %d lines a minute a key",
				keyHeld, max(v.denials.bound/4, 1))
			if err := t.Log(systemActor, s.TenantID, s.Actor.Type, s.Actor.ID, OpDenied, msg); err != nil {
				return err
			}
		}
		if held > 0 {
			msg := fmt.Sprintf("%d denied calls not logged over the last minute or more: past the bound of %d lines a minute",
				held, v.denials.bound)
			if err := t.Log(systemActor, s.TenantID, EntityTenant, s.TenantID, OpDenied, msg); err != nil {
				return err
			}
		}
		if !ok {
			return nil
		}
		msg := fmt.Sprintf("%s denied (%s) from %s: %s", route, statusOf(kind), addressOf(info), reason)
		return t.Log(s.Actor, s.TenantID, s.Actor.Type, s.Actor.ID, OpDenied, msg)
	})
	if werr != nil {
		v.logger.Error("tokenvault: recording a denied call", "tenant", s.TenantID, "error", werr)
	}
}

// statusOf is the HTTP status a denial of kind answers.
func statusOf(k Kind) string {
	switch k {
	case Unauthenticated:
		return "401"
	case RateLimited:
		return "429"
	}
	return "403"
}

// addressOf is the call's client address, or "in process".
func addressOf(info *unit.CallInfo) string {
	if info.ClientAddress == "" {
		return "in process"
	}
	return info.ClientAddress
}

// routeOf is the route the call served (CallInfo.Route) or else the Vault
// method it called, found on the stack: denied runs on the goroutine of
// the unit of work, under the method that ran it. Only a denied call
// pays for the walk.
func routeOf(info *unit.CallInfo) string {
	if info.Route != "" {
		return info.Route
	}
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	const prefix = "github.com/tokenvault/tokenvault.(*Vault)."
	for {
		f, more := frames.Next()
		if m, ok := strings.CutPrefix(f.Function, prefix); ok && m != "" && m[0] >= 'A' && m[0] <= 'Z' && !strings.Contains(m, ".") {
			return "Vault." + m
		}
		if !more {
			return "a Vault method"
		}
	}
}

// stats is what the lines left out.
func (d *denials) stats() DenialStats {
	return DenialStats{UnknownKey: d.unknown.Load(), Lost: d.flood.Lost() + d.keyFlood.Lost()}
}
