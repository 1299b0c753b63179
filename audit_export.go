package tokenvault

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/backoff"
	"github.com/tokenvault/tokenvault/internal/barrier"
)

// AuditSchema names the version of AuditEvent's JSON form for a log
// line. A change that adds, removes or renames a field, or changes its
// meaning, gets a new version: a verifier (auditchain) accepts a line
// only in its canonical form, encoding/json's encoding of AuditEvent byte
// for byte, with no field it does not know.
const AuditSchema = auditchain.LineSchema

// AuditCheckpointSchema names the JSON form of a checkpoint event: an
// AuditEvent that carries a signed checkpoint of a tenant's chain instead
// of a log line.
const AuditCheckpointSchema = auditchain.CheckpointSchema

// AuditEvent is one audit log line, or one signed checkpoint of a
// tenant's audit chain, as it is exported to an AuditSink. It never holds
// token data, keys or secrets. A line's JSON form (schema
// "tokenvault.audit/v1") is:
//
//	{"schema": "tokenvault.audit/v1",   always this value for this version
//	 "id": "...",                       the Log id: duplicates carry the same id
//	 "tenant_id": "...",
//	 "actor_id": "...",                 "" when the system acted (the sweeper)
//	 "actor_type": "...",               application, session, user, operator or system
//	 "entity_type": "...",              one of the Entity* constants
//	 "entity_id": "...",
//	 "operation": "...",                create, read, update, delete or invoke
//	 "message": "...",
//	 "created_at": "2030-01-02T03:04:05.123456789Z",   RFC 3339, UTC, to the nanosecond
//	 "transform": "...",                on a read of a token's data: the transform
//	 "channel": "...",                  applied, the channel and the application it
//	 "application": "...",              went to; absent (empty) on other lines
//	 "seq": 42,                         the line's place in its tenant's chain
//	 "prev_hash": "<64 hex>",           the hash of line seq-1 (zeros for seq 1)
//	 "hash": "<64 hex>"}                the line's own hash
//
// seq, prev_hash and hash are the line's link in its tenant's hash chain
// (package auditchain, docs/audit-chain.md): a line is exported only once
// chained, so every line written since the chain began carries them; a
// line written before carries none. A checkpoint's JSON form (schema
// "tokenvault.audit.checkpoint/v1") is:
//
//	{"schema": "tokenvault.audit.checkpoint/v1",
//	 "id": "checkpoint-<tenant id>-<seq as 16 hex digits>",   "-final" appended for a final one
//	 "tenant_id": "...",
//	 "created_at": "...",               when it was signed
//	 "checkpoint": {"tenant_id": "...", "seq": 42, "hash": "<64 hex>",
//	                "created_at": "...", "key_id": "<16 hex>", "final": true,
//	                "signature": "<base64>"}}
//
// with "checkpoint" the auditchain.Checkpoint, and actor_id, actor_type,
// entity_type, entity_id, operation and message empty. So a copy of
// the export (one sink's, several tenants' events mixed, duplicates and
// all, in any order) verifies without the vault:
// auditchain.VerifyExport, or `tokenvault audit verify -file`.
type AuditEvent = auditchain.Event

// AuditSink receives exported audit events (Options.AuditExport.Sinks). Package
// auditexport has a file, a syslog and an HTTP sink.
//
// Deliver is called by one goroutine per sink, never concurrently with
// itself, with events in the order their lines were written (oldest
// first within a batch; see the package documentation for what order
// holds across batches). It returns nil only once the events are safely
// with the receiver (written and synced, acknowledged): the Vault then
// forgets them. An error makes the Vault offer the same events again
// later, so a receiver may see an event more than once, always with the
// same id. Deliver should return when ctx is done.
type AuditSink interface {
	// Name identifies the sink in the store (its export queue) and in
	// Stats and metric labels: a constant the operator chooses, such as
	// "file", "syslog" or "http"; 1 to 32 of a-z, 0-9, _ and -. A sink
	// keeps its queue across restarts by keeping its name.
	Name() string
	Deliver(ctx context.Context, events []AuditEvent) error
}

// AuditExportStats is the export lag of one sink, in Stats.
type AuditExportStats struct {
	// Sink is the sink's Name.
	Sink string
	// Pending is how many audit lines wait to be delivered to it. It is
	// counted exactly whenever the exporter reads the whole queue, and
	// kept up to date in between from this instance's commits: instances
	// sharing a store see each other's lines only at the next read.
	Pending int
	// OldestAge is the age of the oldest line waiting (0 when none).
	OldestAge time.Duration
}

// Export queue and retry timing.
const (
	// auditBatch bounds the lines one delivery carries and one
	// transaction removes from a queue.
	auditBatch = 500
	// maxAuditBackoff caps the wait between failed deliveries.
	maxAuditBackoff = time.Minute
	// maxExportGap is the longest an exporter woken by new lines waits,
	// counted from the start of its previous pass, before it looks again
	// (AuditExportInterval when shorter). Each pass folds the store's
	// appended lines (a commit) and removes what it delivered (another),
	// so a pass for every group of reads cost a loaded server about a
	// quarter of its reads (BENCHMARKS.md, session 11); paced, the passes
	// are at most about four a second, each with more lines, and a line
	// waits about a quarter of a second plus a pass. A pass that finds a
	// full batch still goes on at once.
	maxExportGap = 250 * time.Millisecond
)

var sinkNameRE = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)

// auditExporter delivers one sink's export queue,
// sys/auditq/<sink>/<nanos>/<tid>/<id>.
type auditExporter struct {
	sink   AuditSink
	name   string
	prefix barrier.Prefix
	// wake is signalled when a transaction that wrote audit lines
	// commits.
	wake chan struct{}
	// pending and oldest (Unix nanoseconds, 0: none) feed Stats.
	pending atomic.Int64
	oldest  atomic.Int64
	// counted orders the counts of committed lines with resetting
	// pending to what the queue held (recount): a count that arrives
	// between the queue's read and the reset would be lost, and Stats
	// would say nothing is pending while a line is. commits counts the
	// counts, so that a recount can tell.
	counted sync.Mutex
	commits uint64
}

// count adds n committed lines to pending.
func (e *auditExporter) count(n int) {
	e.counted.Lock()
	defer e.counted.Unlock()
	e.commits++
	e.pending.Add(int64(n))
}

// committedCounts returns how many counts have arrived, to pass to recount.
func (e *auditExporter) committedCounts() uint64 {
	e.counted.Lock()
	defer e.counted.Unlock()
	return e.commits
}

// recount sets pending to n, what the queue held when read, unless lines
// were counted since since (committedCounts before the read): they may
// not be among the n, and pending keeps them. The next quiet read
// recounts.
func (e *auditExporter) recount(n int, since uint64) {
	e.counted.Lock()
	defer e.counted.Unlock()
	if e.commits == since {
		e.pending.Store(int64(n))
	}
}

// newAuditExporters checks the sinks' names.
func newAuditExporters(sinks []AuditSink) ([]*auditExporter, error) {
	var out []*auditExporter
	seen := map[string]bool{}
	for _, s := range sinks {
		if s == nil {
			return nil, errors.New("tokenvault: Options.AuditExport.Sinks holds a nil sink")
		}
		name := s.Name()
		if !sinkNameRE.MatchString(name) {
			return nil, fmt.Errorf("tokenvault: audit sink name %q must be 1 to 32 of a-z, 0-9, _ and -", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("tokenvault: two audit sinks are named %q", name)
		}
		seen[name] = true
		out = append(out, &auditExporter{sink: s, name: name, prefix: barrier.AuditQueues.Sub(name + "/"), wake: make(chan struct{}, 1)})
	}
	return out, nil
}

// queueForExport writes, in the caller's transaction, an export queue
// entry of every sink for the line just written at log/<suffix>.
func (t *txn) queueForExport(tid, suffix string) error {
	for _, e := range t.v.exporters {
		if err := t.AppendIndex(barrier.Tenant(tid).AuditQueueEntry(e.name, suffix)); err != nil {
			return err
		}
	}
	if len(t.v.exporters) > 0 {
		*auditLogged.of(t)++
	}
	return nil
}

// auditLogged counts the audit lines a transaction queued for export,
// reported to the exporters once it commits.
var auditLogged = &txnLocal[int]{finish: func(t *txn, n *int, committed bool) {
	if committed {
		t.v.auditCommitted(*n, t.Now)
	}
}}

// exportPending reports whether a sink has yet to receive tenant tid's
// line at log/<suffix>: retention keeps such lines.
func (t *txn) exportPending(tid, suffix string) (bool, error) {
	for _, e := range t.v.exporters {
		queued, err := t.Has(barrier.Tenant(tid).AuditQueueEntry(e.name, suffix))
		if err != nil || queued {
			return queued, err
		}
	}
	return false, nil
}

// auditCommitted tells the exporters that a transaction wrote n lines.
func (v *Vault) auditCommitted(n int, at time.Time) {
	for _, e := range v.exporters {
		e.count(n)
		e.oldest.CompareAndSwap(0, barrier.UnixNanos(at))
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

// startAuditExport starts one exporter goroutine per sink, under v.bg.
func (v *Vault) startAuditExport(interval, backoff time.Duration) {
	for _, e := range v.exporters {
		v.exportWG.Go(func() { v.runExporter(e, interval, backoff) })
	}
}

// runExporter delivers e's queue until the Vault closes: a batch at a
// time, removing a batch's entries only once the sink has it. A failed
// delivery is retried after a wait that doubles up to maxAuditBackoff,
// jittered (internal/backoff) so that instances sharing a sink spread out.
func (v *Vault) runExporter(e *auditExporter, interval, base time.Duration) {
	ctx := v.bg
	wait := backoff.Backoff{Base: base, Max: maxAuditBackoff}
	// Since Go 1.23 a stopped or reset timer never delivers a stale
	// tick, so it needs no draining.
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	gap := min(interval, maxExportGap)
	v.countQueue(ctx, e)
	for {
		began := time.Now()
		more, err := v.exportOnce(ctx, e)
		if ctx.Err() != nil {
			return
		}
		d := interval
		switch {
		case err != nil:
			d = wait.Next()
			v.logger.Warn("tokenvault: audit export failed; retrying", "sink", e.name, "err", err, "retry_in", d)
		case more:
			wait.Reset()
			continue
		default:
			wait.Reset()
		}
		timer.Reset(d)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-e.wake:
			if err != nil {
				// A failing sink waits out its backoff.
				select {
				case <-ctx.Done():
					return
				case <-timer.C:
				}
			} else if rest := gap - time.Since(began); rest > 0 {
				// Lines keep coming: pace the passes (maxExportGap).
				timer.Reset(rest)
				select {
				case <-ctx.Done():
					return
				case <-timer.C:
				}
			}
			timer.Stop()
		}
	}
}

// countQueue counts e's queue once, at start, so that Stats shows a
// backlog left by an earlier run before the exporter has worked it down;
// afterwards commits and deliveries keep the count.
func (v *Vault) countQueue(ctx context.Context, e *auditExporter) {
	n := 0
	since := e.committedCounts()
	err := v.view(ctx, func(t *txn) error {
		n = 0
		return t.ScanKeys(e.prefix, func(barrier.Key, string) error {
			n++
			return nil
		})
	})
	if err == nil {
		e.recount(n, since)
	}
}

// exportOnce delivers up to auditBatch lines and checkpoints of e's
// queue and removes their entries. more reports that the queue held more.
// A line it finds not chained yet (appended by another instance after
// this pass folded) keeps its entry for the next pass: no line leaves
// without its link.
func (v *Vault) exportOnce(ctx context.Context, e *auditExporter) (more bool, err error) {
	var keys []barrier.Key
	var rests []string
	var events []AuditEvent
	var waiting int
	since := e.committedCounts()
	if err := v.linkNow(ctx); err != nil {
		return false, err
	}
	err = v.view(ctx, func(t *txn) error {
		keys, rests, events, more, waiting = keys[:0], rests[:0], events[:0], false, 0
		err := t.Scan(e.prefix, "", auditBatch+1, func(k barrier.Key, rest string) error {
			keys, rests = append(keys, k), append(rests, rest)
			return nil
		})
		if err != nil {
			return err
		}
		if len(keys) > auditBatch {
			keys, rests, more = keys[:auditBatch], rests[:auditBatch], true
		}
		kept := keys[:0]
		for i, rest := range rests {
			ev, state, err := auditlog.ExportEvent(t.Tx, rest, errTenantGone)
			if err != nil {
				return err
			}
			switch state {
			case auditlog.ExportWait:
				waiting++
				continue // not removed: the next pass delivers it
			case auditlog.ExportSend:
				events = append(events, ev)
			}
			kept = append(kept, keys[i])
		}
		keys = kept
		return nil
	})
	if err != nil {
		return false, err
	}
	if !more {
		e.recount(len(keys)+waiting, since)
	} else if p := e.pending.Load(); p <= auditBatch {
		e.pending.CompareAndSwap(p, auditBatch+1) // at least that many
	}
	if len(rests) > 0 {
		n, _ := strconv.ParseUint(strings.SplitN(rests[0], "/", 2)[0], 16, 64)
		e.oldest.Store(int64(n))
	} else {
		e.oldest.Store(0)
	}
	if len(keys) == 0 {
		return false, nil
	}
	if len(events) > 0 {
		err := e.sink.Deliver(ctx, events)
		if v.metrics != nil && ctx.Err() == nil {
			v.metrics.AuditExported(e.name, len(events), err)
		}
		if err != nil {
			return false, fmt.Errorf("deliver %d events: %w", len(events), err)
		}
	}
	err = v.update(ctx, func(t *txn) error {
		for _, k := range keys {
			if err := t.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	if p := e.pending.Add(-int64(len(keys))); p < 0 {
		e.pending.CompareAndSwap(p, 0)
	}
	if !more && waiting == 0 {
		e.oldest.Store(0)
		if e.pending.Load() > 0 {
			// Lines committed meanwhile: the next read dates them.
			e.oldest.CompareAndSwap(0, barrier.UnixNanos(v.now()))
		}
	}
	return more, nil
}

// auditStats is the lag of every sink, for Stats.
func (v *Vault) auditStats() []AuditExportStats {
	if len(v.exporters) == 0 {
		return nil
	}
	now := barrier.UnixNanos(v.now())
	out := make([]AuditExportStats, 0, len(v.exporters))
	for _, e := range v.exporters {
		s := AuditExportStats{Sink: e.name, Pending: int(e.pending.Load())}
		if o := e.oldest.Load(); o > 0 && now > o {
			s.OldestAge = time.Duration(now - o)
		}
		out = append(out, s)
	}
	return out
}
