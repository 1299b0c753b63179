// Package prommetrics exports a Vault's metrics to Prometheus, with
// github.com/prometheus/client_golang. The Vault itself depends on no
// monitoring library: it reports through the tokenvault.Metrics interface
// (Options.Metrics) and Vault.Stats, and this package turns those into
// Prometheus collectors; HTTP implements httpapi's Observe hook.
//
//	reg := prommetrics.NewRegistry()              // go_* and process_*
//	m := prommetrics.New(reg)                     // domain counters and histograms
//	v, err := tokenvault.Open(ctx, tokenvault.Options{Path: "vault.db", MasterKey: key, Metrics: m})
//	reg.MustRegister(prommetrics.NewStatsCollector(v)) // gauges, read at scrape
//	hm := prommetrics.NewHTTP(reg)
//	api := httpapi.New(v, httpapi.Options{Observe: hm.Observe})
//	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// # Metrics
//
// Every label value is one of a fixed set written below: never a tenant,
// token, application or invocation id, a key, a path or anything else a
// caller chose, so the number of series is bounded whatever the traffic
// and /metrics reveals counts, not data.
//
//	name                                        type       labels
//	tokenvault_http_requests_total              counter    method, route, status
//	tokenvault_http_request_duration_seconds    histogram  method, route
//	tokenvault_http_requests_in_flight          gauge      -
//	tokenvault_tokens_total                     counter    op
//	tokenvault_code_run_duration_seconds        histogram  kind, outcome
//	tokenvault_code_workers                     gauge      -
//	tokenvault_code_workers_busy                gauge      -
//	tokenvault_code_workers_max                 gauge      -
//	tokenvault_async_invocations                gauge      -
//	tokenvault_webhooks_pending                 gauge      -
//	tokenvault_webhook_deliveries_pending       gauge      -
//	tokenvault_audit_export_pending             gauge      sink
//	tokenvault_audit_export_lag_seconds         gauge      sink
//	tokenvault_audit_events_exported_total      counter    sink
//	tokenvault_audit_export_failures_total      counter    sink
//	tokenvault_webhook_deliveries_total         counter    outcome
//	tokenvault_webhook_attempts_total           counter    -
//	tokenvault_sweeps_total                     counter    outcome
//	tokenvault_sweep_duration_seconds           histogram  -
//	tokenvault_swept_total                      counter    kind
//	tokenvault_store_commit_duration_seconds    histogram  -
//	tokenvault_store_commit_updates             histogram  -
//	go_*, process_*                             (client_golang's Go and process collectors)
//
// Label values:
//
//	method   GET HEAD POST PUT PATCH DELETE CONNECT OPTIONS TRACE, or other
//	route    the pattern that matched ("/tokens/{id}", "/healthz"), or unmatched
//	status   the HTTP status code written
//	op       created read updated deleted detokenized (tokenvault.TokenOp)
//	kind     code: reactor transform (tokenvault.CodeKind)
//	outcome  code: ok error timeout memory crash unavailable (tokenvault.CodeOutcome)
//	outcome  webhooks: delivered failed canceled not_sent (tokenvault.WebhookOutcome)
//	outcome  sweeps: ok error
//	kind     swept: application token session invitation idempotency cvc log (tokenvault.SweepKind)
//	sink     the Name of each tokenvault.Options.AuditExport.Sinks: a constant the operator chose
//	         (the server's are file, syslog and http), never tenant data
//
// What is counted:
//
//   - tokens_total counts operations in transactions that committed:
//     created (each token created), read (GetToken; each token of a list or
//     search page that carries data; the existing token a deduplicating
//     create returned), updated, deleted (DeleteToken; expired tokens are
//     swept_total{kind="token"}), detokenized (each distinct token a
//     Detokenize call or a reactor's arguments expanded).
//   - code_run_duration_seconds times each run of a reactor or proxy
//     transform, waiting for a worker included; its _count is the number of
//     runs by outcome. unavailable means nothing ran (no worker in time,
//     the vault closing, a worker that could not start).
//   - the worker and async gauges are read from Vault.Stats at each scrape.
//   - audit_export_pending and audit_export_lag_seconds are read from
//     Vault.Stats at each scrape, one series per audit sink: the lines not
//     yet delivered to it and the age of the oldest (0 when none waits). A
//     lag that keeps growing is a sink that is down.
//     audit_events_exported_total counts events delivered (a redelivery
//     counts again) and audit_export_failures_total failed deliveries, each
//     retried; their series appear with a sink's first delivery.
//   - webhook_deliveries_total counts deliveries once they end, after all
//     their retries; webhook_attempts_total counts every POST.
//   - store_commit_* are reported only for the bbolt file the Vault opens
//     (Options.Path), or a bolt.Store opened with
//     bolt.Options{OnCommit: m.StoreCommit}: the commit's duration from its
//     last update's end (page writes and fsync), and how many Updates the
//     batch carried. Other stores report none.
package prommetrics
