package auditlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The audit export: one goroutine per sink delivers that sink's export
// queue, sys/auditq/<sink>/<nanos>/<tid>/<id>, which every commit that
// writes a line fills (Exporter.Queue) and a pass empties once the sink
// has the lines (export_pass.go).

// Sink receives exported audit events: the root's AuditSink is this type
// (its doc says what Deliver promises).
type Sink interface {
	// Name identifies the sink in the store (its export queue) and in
	// Stats and metric labels: a constant the operator chooses, such as
	// "file", "syslog" or "http"; 1 to 32 of a-z, 0-9, _ and -. A sink
	// keeps its queue across restarts by keeping its name.
	Name() string
	// Deliver returns nil only once the events are safely with the
	// receiver; an error makes the exporter offer them again later.
	Deliver(ctx context.Context, events []auditchain.Event) error
}

// ExportStats is the export lag of one sink: the root's AuditExportStats.
type ExportStats struct {
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

// ExportConfig is what an Exporter needs of the Vault.
type ExportConfig struct {
	// Sinks are Options.AuditExport.Sinks; none makes Queue and
	// Pending no-ops.
	Sinks []Sink
	// Work runs the passes' transactions.
	Work *unit.Work
	// Link chains the queued lines before a pass reads the queue (the
	// root's linkNow): a line leaves only with its link.
	Link func(context.Context) error
	// TenantGone is the error a read of a deleted tenant's records
	// returns.
	TenantGone error
	// Exported, if set, reports one delivery (Metrics.AuditExported).
	Exported func(sink string, n int, err error)
	// Logger takes the failed deliveries.
	Logger *slog.Logger
	// Now is the Vault's clock.
	Now func() time.Time
	// Interval is how often an idle exporter looks at its queue, and
	// Backoff the first wait after a failed delivery.
	Interval, Backoff time.Duration
}

var sinkNameRE = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)

// Exporter is the audit export of one Vault: the exporters of its sinks.
type Exporter struct {
	cfg   ExportConfig
	sinks []*sinkExporter
	// logged counts the lines a transaction queued, reported to the
	// sinks' exporters once it commits.
	logged unit.Local[int]
}

// sinkExporter delivers one sink's export queue.
type sinkExporter struct {
	sink   Sink
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

// CheckSinks checks the sinks' names: each set, valid and its own. The
// errors name what is wrong with Options.AuditExport.
func CheckSinks(sinks []Sink) error {
	seen := map[string]bool{}
	for _, s := range sinks {
		if s == nil {
			return errors.New("tokenvault: Options.AuditExport.Sinks holds a nil sink")
		}
		name := s.Name()
		if !sinkNameRE.MatchString(name) {
			return fmt.Errorf("tokenvault: audit sink name %q must be 1 to 32 of a-z, 0-9, _ and -", name)
		}
		if seen[name] {
			return fmt.Errorf("tokenvault: two audit sinks are named %q", name)
		}
		seen[name] = true
	}
	return nil
}

// NewExporter returns the exporter of cfg, whose Sinks passed CheckSinks
// (Open checks them before it opens the store); Run runs it. An Interval
// or Backoff of 0 means a second.
func NewExporter(cfg ExportConfig) *Exporter {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	x := &Exporter{cfg: cfg}
	x.logged.Finish = func(t *unit.Tx, n *int, committed bool) {
		if committed {
			x.Committed(*n, t.Now)
		}
	}
	for _, s := range cfg.Sinks {
		name := s.Name()
		x.sinks = append(x.sinks, &sinkExporter{sink: s, name: name, prefix: barrier.AuditQueues.Sub(name + "/"), wake: make(chan struct{}, 1)})
	}
	return x
}

// Queue writes, in t, an export queue entry of every sink for tenant
// tid's line just written at log/<suffix>; the sinks' exporters are told
// once t commits.
func (x *Exporter) Queue(t *unit.Tx, tid, suffix string) error {
	for _, e := range x.sinks {
		if err := t.AppendIndex(barrier.Tenant(tid).AuditQueueEntry(e.name, suffix)); err != nil {
			return err
		}
	}
	if len(x.sinks) > 0 {
		*x.logged.Of(t)++
	}
	return nil
}

// Pending reports whether a sink has yet to receive tenant tid's line at
// log/<suffix>: retention keeps such lines.
func (x *Exporter) Pending(t *unit.Tx, tid, suffix string) (bool, error) {
	for _, e := range x.sinks {
		queued, err := t.Has(barrier.Tenant(tid).AuditQueueEntry(e.name, suffix))
		if err != nil || queued {
			return queued, err
		}
	}
	return false, nil
}

// Committed tells the sinks' exporters that a transaction committed at
// at wrote n lines.
func (x *Exporter) Committed(n int, at time.Time) {
	for _, e := range x.sinks {
		e.count(n)
		e.oldest.CompareAndSwap(0, barrier.UnixNanos(at))
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

// Stats is the lag of every sink, nil when there are none.
func (x *Exporter) Stats() []ExportStats {
	if len(x.sinks) == 0 {
		return nil
	}
	now := barrier.UnixNanos(x.cfg.Now())
	out := make([]ExportStats, 0, len(x.sinks))
	for _, e := range x.sinks {
		s := ExportStats{Sink: e.name, Pending: int(e.pending.Load())}
		if o := e.oldest.Load(); o > 0 && now > o {
			s.OldestAge = time.Duration(now - o)
		}
		out = append(out, s)
	}
	return out
}

// count adds n committed lines to pending.
func (e *sinkExporter) count(n int) {
	e.counted.Lock()
	defer e.counted.Unlock()
	e.commits++
	e.pending.Add(int64(n))
}

// committedCounts returns how many counts have arrived, to pass to recount.
func (e *sinkExporter) committedCounts() uint64 {
	e.counted.Lock()
	defer e.counted.Unlock()
	return e.commits
}

// recount sets pending to n, what the queue held when read, unless lines
// were counted since since (committedCounts before the read): they may
// not be among the n, and pending keeps them. The next quiet read
// recounts.
func (e *sinkExporter) recount(n int, since uint64) {
	e.counted.Lock()
	defer e.counted.Unlock()
	if e.commits == since {
		e.pending.Store(int64(n))
	}
}
