package prommetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/tokenvault/tokenvault"
)

var _ tokenvault.Metrics = (*Metrics)(nil)

// Bucket bounds, in seconds or Updates.
var (
	// codeBuckets go from a warm worker's few milliseconds to the longest
	// asynchronous run (tokenvault.MaxReactorTimeout, 210 s).
	codeBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 210}
	// commitBuckets go from a commit without fsync (a fraction of a
	// millisecond) to a stalled disk.
	commitBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	// updatesBuckets are powers of two up to the default MaxBatchSize.
	updatesBuckets = prometheus.ExponentialBuckets(1, 2, 11) // 1 .. 1024
	// sweepBuckets go from an idle sweep to one that pruned a year of logs.
	sweepBuckets = []float64{.001, .01, .1, 1, 10, 60, 300, 1800}
)

// Metrics implements tokenvault.Metrics with Prometheus counters and
// histograms. Give it to tokenvault.Options.Metrics. It is safe for
// concurrent use.
type Metrics struct {
	tokens        *prometheus.CounterVec
	tokenCounters map[tokenvault.TokenOp]prometheus.Counter

	code       *prometheus.HistogramVec
	codeByKind map[codeKey]prometheus.Observer

	webhooks        *prometheus.CounterVec
	webhookAttempts prometheus.Counter

	sweeps        *prometheus.CounterVec
	sweepDuration prometheus.Histogram
	swept         *prometheus.CounterVec

	commitDuration prometheus.Histogram
	commitUpdates  prometheus.Histogram

	auditExported, auditFailures *prometheus.CounterVec

	eventAttempts *prometheus.CounterVec
	eventLag      prometheus.Histogram
	hooksDisabled *prometheus.CounterVec
}

type codeKey struct {
	kind    tokenvault.CodeKind
	outcome tokenvault.CodeOutcome
}

// New returns Metrics registered with reg (none when reg is nil). Every
// series of every label value the Vault reports exists from the start, at
// zero, so that rates and absent-series alerts work before the first event.
// It panics if reg already holds metrics of the same names, as
// prometheus.MustRegister does.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tokenvault_tokens_total",
			Help: "Token operations committed, by op: created, read, updated, deleted, detokenized.",
		}, []string{"op"}),
		tokenCounters: map[tokenvault.TokenOp]prometheus.Counter{},
		code: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tokenvault_code_run_duration_seconds",
			Help:    "Runs of tenant code (kind: reactor, transform) by outcome (ok, error, timeout, memory, crash, unavailable), waiting for a worker included; _count counts the runs.",
			Buckets: codeBuckets,
		}, []string{"kind", "outcome"}),
		codeByKind: map[codeKey]prometheus.Observer{},
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tokenvault_webhook_deliveries_total",
			Help: "Webhook deliveries ended, by outcome: delivered, failed (every attempt), canceled (the vault closed), not_sent.",
		}, []string{"outcome"}),
		webhookAttempts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tokenvault_webhook_attempts_total",
			Help: "Webhook POSTs sent, retries included.",
		}),
		sweeps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tokenvault_sweeps_total",
			Help: "Runs of the sweeper (or of Vault.Sweep), by outcome: ok, error.",
		}, []string{"outcome"}),
		sweepDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tokenvault_sweep_duration_seconds",
			Help:    "Time one run of the sweeper took.",
			Buckets: sweepBuckets,
		}),
		swept: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tokenvault_swept_total",
			Help: "Objects the sweeper removed, by kind: application, token, session, invitation (marked expired), idempotency, cvc, log.",
		}, []string{"kind"}),
		commitDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tokenvault_store_commit_duration_seconds",
			Help:    "Time to commit one bbolt write transaction (writing pages, fsync, meta page), after its last update ran.",
			Buckets: commitBuckets,
		}),
		commitUpdates: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tokenvault_store_commit_updates",
			Help:    "Updates carried by one bbolt commit: more than one when concurrent writes were batched.",
			Buckets: updatesBuckets,
		}),
		auditExported: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tokenvault_audit_events_exported_total",
			Help: "Audit events delivered to the audit sink named by sink (redeliveries after a crash or failure count again).",
		}, []string{"sink"}),
		auditFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tokenvault_audit_export_failures_total",
			Help: "Failed deliveries to the audit sink named by sink; each is retried.",
		}, []string{"sink"}),
		eventAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tokenvault_event_delivery_attempts_total",
			Help: "Attempts to deliver an event to a webhook subscription, by outcome: delivered, retried, failed (given up), gone (410: the webhook was disabled), dropped (not queued: the webhook or its tenant was at its cap of pending deliveries).",
		}, []string{"outcome"}),
		eventLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tokenvault_event_delivery_lag_seconds",
			Help:    "Time from an event's commit to its receiver's acknowledgement, retries included.",
			Buckets: lagBuckets,
		}),
		hooksDisabled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tokenvault_webhooks_disabled_total",
			Help: "Webhook subscriptions the vault disabled, by reason: gone (the receiver answered 410), failing (no success for the configured time).",
		}, []string{"reason"}),
	}
	for _, op := range tokenvault.TokenOps() {
		m.tokenCounters[op] = m.tokens.WithLabelValues(string(op))
	}
	for _, kind := range tokenvault.CodeKinds() {
		for _, outcome := range tokenvault.CodeOutcomes() {
			m.codeByKind[codeKey{kind, outcome}] = m.code.WithLabelValues(string(kind), string(outcome))
		}
	}
	for _, outcome := range tokenvault.WebhookOutcomes() {
		m.webhooks.WithLabelValues(string(outcome))
	}
	for _, outcome := range tokenvault.EventOutcomes() {
		m.eventAttempts.WithLabelValues(string(outcome))
	}
	m.hooksDisabled.WithLabelValues(tokenvault.DisabledGone)
	m.hooksDisabled.WithLabelValues(tokenvault.DisabledFailing)
	m.sweeps.WithLabelValues("ok")
	m.sweeps.WithLabelValues("error")
	for _, kind := range tokenvault.SweepKinds() {
		m.swept.WithLabelValues(string(kind))
	}
	if reg != nil {
		reg.MustRegister(m.tokens, m.code, m.webhooks, m.webhookAttempts, m.sweeps, m.sweepDuration, m.swept,
			m.commitDuration, m.commitUpdates, m.auditExported, m.auditFailures,
			m.eventAttempts, m.eventLag, m.hooksDisabled)
	}
	return m
}

// Tokens counts n token operations. The counters are looked up in a map
// filled by New: no allocation, no lock.
func (m *Metrics) Tokens(op tokenvault.TokenOp, n int) {
	if c, ok := m.tokenCounters[op]; ok {
		c.Add(float64(n))
		return
	}
	m.tokens.WithLabelValues(string(op)).Add(float64(n)) // a value this version does not know
}

// CodeRun observes one run of tenant code.
func (m *Metrics) CodeRun(kind tokenvault.CodeKind, outcome tokenvault.CodeOutcome, d time.Duration) {
	o, ok := m.codeByKind[codeKey{kind, outcome}]
	if !ok {
		o = m.code.WithLabelValues(string(kind), string(outcome))
	}
	o.Observe(d.Seconds())
}

// WebhookDelivered counts one delivery and its attempts.
func (m *Metrics) WebhookDelivered(outcome tokenvault.WebhookOutcome, attempts int) {
	m.webhooks.WithLabelValues(string(outcome)).Inc()
	m.webhookAttempts.Add(float64(attempts))
}

// Swept counts objects the sweeper removed.
func (m *Metrics) Swept(kind tokenvault.SweepKind, n int) {
	m.swept.WithLabelValues(string(kind)).Add(float64(n))
}

// SweepDone counts one run of the sweeper and observes its duration.
func (m *Metrics) SweepDone(d time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.sweeps.WithLabelValues(outcome).Inc()
	m.sweepDuration.Observe(d.Seconds())
}

// StoreCommit observes one bbolt commit. Its signature is that of
// bolt.Options.OnCommit, for a store the host opens itself.
func (m *Metrics) StoreCommit(updates int, d time.Duration) {
	m.commitDuration.Observe(d.Seconds())
	m.commitUpdates.Observe(float64(updates))
}

// AuditExported counts one delivery to an audit sink: its events, or a
// failure.
func (m *Metrics) AuditExported(sink string, n int, err error) {
	if err != nil {
		m.auditFailures.WithLabelValues(sink).Inc()
		return
	}
	m.auditExported.WithLabelValues(sink).Add(float64(n))
}

// lagBuckets span a delivery's lag: milliseconds when the receiver is up,
// days when it is retried.
var lagBuckets = []float64{0.01, 0.05, 0.25, 1, 5, 30, 300, 1800, 7200, 36000, 86400, 259200}

// EventDelivery counts one attempt to deliver an event, and observes the
// lag of an acknowledged one.
func (m *Metrics) EventDelivery(outcome tokenvault.EventOutcome, lag time.Duration) {
	m.eventAttempts.WithLabelValues(string(outcome)).Inc()
	if outcome == tokenvault.EventDelivered {
		m.eventLag.Observe(lag.Seconds())
	}
}

// WebhookAutoDisabled counts a webhook the vault disabled.
func (m *Metrics) WebhookAutoDisabled(reason string) {
	m.hooksDisabled.WithLabelValues(reason).Inc()
}

// StatsSource is what NewStatsCollector reads: a *tokenvault.Vault.
type StatsSource interface {
	Stats() tokenvault.Stats
}

// statsCollector reports a Vault's gauges, read when scraped.
type statsCollector struct {
	src                                      StatsSource
	workers, busy, capacity, async, webhooks *prometheus.Desc
	// deliveries is the event deliveries pending (Stats.PendingEventDeliveries).
	deliveries *prometheus.Desc
	// auditPending and auditLag are per audit sink: the label is the
	// sink's name, a constant the operator chose (file, syslog, http).
	auditPending, auditLag *prometheus.Desc
	// chainUnlinked and chainLag are the audit chain's backlog
	// (Stats.AuditChain), chainLinking whether this instance links.
	chainUnlinked, chainLag, chainLinking *prometheus.Desc
	// deniedUnknown and deniedLost are the denied calls no tenant's log
	// holds (Stats.Denials).
	deniedUnknown, deniedLost *prometheus.Desc
}

// NewStatsCollector returns a collector of v's gauges (Vault.Stats), read
// at each scrape: tokenvault_code_workers, tokenvault_code_workers_busy,
// tokenvault_code_workers_max, tokenvault_async_invocations,
// tokenvault_webhooks_pending, tokenvault_webhook_deliveries_pending, and
// for each audit sink
// tokenvault_audit_export_pending{sink} and
// tokenvault_audit_export_lag_seconds{sink}, and the audit chain's backlog:
// tokenvault_audit_chain_unlinked, tokenvault_audit_chain_unlinked_age_seconds
// and tokenvault_audit_chain_linking; and the denied calls in no tenant's
// log: tokenvault_denied_unknown_key_total and
// tokenvault_denied_lines_lost_total. Register it once the Vault is open.
func NewStatsCollector(v StatsSource) prometheus.Collector {
	return &statsCollector{
		src:      v,
		workers:  prometheus.NewDesc("tokenvault_code_workers", "Sandbox worker processes alive, idle or busy.", nil, nil),
		busy:     prometheus.NewDesc("tokenvault_code_workers_busy", "Runs and checks of tenant code holding a worker slot.", nil, nil),
		capacity: prometheus.NewDesc("tokenvault_code_workers_max", "The most sandbox workers (Options.Code.Workers).", nil, nil),
		async:    prometheus.NewDesc("tokenvault_async_invocations", "Asynchronous reactor invocations waiting for a worker or running.", nil, nil),
		webhooks: prometheus.NewDesc("tokenvault_webhooks_pending", "Webhooks being delivered, retries included.", nil, nil),
		deliveries: prometheus.NewDesc("tokenvault_webhook_deliveries_pending",
			"Event deliveries to webhook subscriptions queued or waiting for a retry, as this instance counts them.", nil, nil),
		auditPending: prometheus.NewDesc("tokenvault_audit_export_pending",
			"Audit log lines not yet delivered to the audit sink (tokenvault.Options.AuditExport.Sinks) named by sink.", []string{"sink"}, nil),
		auditLag: prometheus.NewDesc("tokenvault_audit_export_lag_seconds",
			"Age of the oldest audit log line not yet delivered to the sink; 0 when none waits.", []string{"sink"}, nil),
		chainUnlinked: prometheus.NewDesc("tokenvault_audit_chain_unlinked",
			"Audit log lines committed and not yet linked into their tenant's chain, of every tenant (counted up to 5000).", nil, nil),
		chainLag: prometheus.NewDesc("tokenvault_audit_chain_unlinked_age_seconds",
			"Age of the oldest audit log line not yet linked into its chain; 0 when none waits.", nil, nil),
		chainLinking: prometheus.NewDesc("tokenvault_audit_chain_linking",
			"1 when this instance holds the linker lease (links every tenant's lines), else 0.", nil, nil),
		deniedUnknown: prometheus.NewDesc("tokenvault_denied_unknown_key_total",
			"Calls refused (401, 429) with a key no tenant holds, since this instance started: in the server's log, in no tenant's audit log.", nil, nil),
		deniedLost: prometheus.NewDesc("tokenvault_denied_lines_lost_total",
			"Denied calls past the per-tenant bound of audit lines while 10,000 tenants already had some held: counted in no line.", nil, nil),
	}
}

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.workers
	ch <- c.busy
	ch <- c.capacity
	ch <- c.async
	ch <- c.webhooks
	ch <- c.deliveries
	ch <- c.auditPending
	ch <- c.auditLag
	ch <- c.chainUnlinked
	ch <- c.chainLag
	ch <- c.chainLinking
	ch <- c.deniedUnknown
	ch <- c.deniedLost
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.src.Stats()
	ch <- prometheus.MustNewConstMetric(c.workers, prometheus.GaugeValue, float64(s.CodeWorkers))
	ch <- prometheus.MustNewConstMetric(c.busy, prometheus.GaugeValue, float64(s.CodeWorkersBusy))
	ch <- prometheus.MustNewConstMetric(c.capacity, prometheus.GaugeValue, float64(s.CodeWorkersMax))
	ch <- prometheus.MustNewConstMetric(c.async, prometheus.GaugeValue, float64(s.AsyncInvocations))
	ch <- prometheus.MustNewConstMetric(c.webhooks, prometheus.GaugeValue, float64(s.PendingWebhooks))
	ch <- prometheus.MustNewConstMetric(c.deliveries, prometheus.GaugeValue, float64(s.PendingEventDeliveries))
	for _, a := range s.AuditExport {
		ch <- prometheus.MustNewConstMetric(c.auditPending, prometheus.GaugeValue, float64(a.Pending), a.Sink)
		ch <- prometheus.MustNewConstMetric(c.auditLag, prometheus.GaugeValue, a.OldestAge.Seconds(), a.Sink)
	}
	ch <- prometheus.MustNewConstMetric(c.chainUnlinked, prometheus.GaugeValue, float64(s.AuditChain.Unlinked))
	ch <- prometheus.MustNewConstMetric(c.chainLag, prometheus.GaugeValue, s.AuditChain.OldestAge.Seconds())
	linking := 0.0
	if s.AuditChain.Linking {
		linking = 1
	}
	ch <- prometheus.MustNewConstMetric(c.chainLinking, prometheus.GaugeValue, linking)
	ch <- prometheus.MustNewConstMetric(c.deniedUnknown, prometheus.CounterValue, float64(s.Denials.UnknownKey))
	ch <- prometheus.MustNewConstMetric(c.deniedLost, prometheus.CounterValue, float64(s.Denials.Lost))
}

// NewRegistry returns a registry holding the Go runtime collector (go_*)
// and the process collector (process_*: CPU, memory, open files), to
// which the Vault's metrics are added.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}
