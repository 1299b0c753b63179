package prommetrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/prommetrics"
)

var ctx = context.Background()

// fixture is a Vault on a bbolt file, measured into reg.
type fixture struct {
	v     *tokenvault.Vault
	reg   *prometheus.Registry
	clock *testfake.Clock
	mgmt  string
	key   string // may create, read, update, delete, use every token
	// ids are every id and key the test made, which no label may hold.
	ids []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	reg := prommetrics.NewRegistry()
	m := prommetrics.New(reg)
	c := testfake.NewClock(time.Now().UTC())
	master := make([]byte, 32)
	for i := range master {
		master[i] = byte(i + 1)
	}
	v, err := tokenvault.Open(ctx, tokenvault.Options{
		Path:      filepath.Join(t.TempDir(), "vault.db"),
		Now:       c.Now,
		Metrics:   m,
		Logger:    slog.New(slog.NewTextHandler(t.Output(), nil)),
		Keys:      tokenvault.KeyOptions{MasterKey: master},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1},
		Code:      tokenvault.CodeOptions{Timeout: 2 * time.Second},
		Outbound:  tokenvault.OutboundOptions{AllowPrivateDestinations: true, WebhookBackoff: time.Millisecond},
	})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { v.Close() })
	reg.MustRegister(prommetrics.NewStatsCollector(v))
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme", Owner: tokenvault.User{Email: "owner@example.com"}})
	if err != nil {
		t.Fatalf("CreateTenant: %v", err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "user", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: tokenvault.TransformReveal,
			Permissions: []string{"token:create", "token:read", "token:update", "token:delete", "token:use"}}},
	})
	if err != nil {
		t.Fatalf("CreateApplication: %v", err)
	}
	return &fixture{v: v, reg: reg, clock: c, mgmt: string(boot.Application.Key), key: string(app.Key),
		ids: []string{boot.Tenant.ID, boot.Application.ID, string(boot.Application.Key), app.ID, string(app.Key)}}
}

// series is one sample of a gathered metric: its labels and value (a
// counter's or gauge's value, a histogram's count).
type series struct {
	labels map[string]string
	value  float64
}

func gather(t *testing.T, reg prometheus.Gatherer) map[string][]series {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	out := map[string][]series{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			s := series{labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				s.value = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				s.value = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				s.value = float64(m.GetHistogram().GetSampleCount())
			case dto.MetricType_UNTYPED:
				s.value = m.GetUntyped().GetValue()
			case dto.MetricType_SUMMARY:
				s.value = float64(m.GetSummary().GetSampleCount())
			}
			out[mf.GetName()] = append(out[mf.GetName()], s)
		}
	}
	return out
}

// value is the sample of name whose labels are exactly labels ("k=v"
// pairs), or -1 when there is none.
func value(all map[string][]series, name string, labels ...string) float64 {
	want := map[string]string{}
	for _, kv := range labels {
		k, v, _ := strings.Cut(kv, "=")
		want[k] = v
	}
next:
	for _, s := range all[name] {
		if len(s.labels) != len(want) {
			continue
		}
		for k, v := range want {
			if s.labels[k] != v {
				continue next
			}
		}
		return s.value
	}
	return -1
}

// labelSets lists the label names each metric has, to hold them to the
// documented sets.
func labelSets(all map[string][]series) map[string]string {
	out := map[string]string{}
	for name, ss := range all {
		for _, s := range ss {
			var names []string
			for k := range s.labels {
				names = append(names, k)
			}
			sort.Strings(names)
			out[name] = strings.Join(names, ",")
		}
	}
	return out
}

// receiver is a webhook receiver that answers 204.
type receiver struct {
	mu  sync.Mutex
	got int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	io.Copy(io.Discard, req.Body)
	r.mu.Lock()
	r.got++
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// TestVaultMetrics: real operations on a Vault show as the documented
// metrics, with the expected counts and label sets.
func TestVaultMetrics(t *testing.T) {
	f := newFixture(t)
	v, key := f.v, f.key

	expires := f.clock.Now().Add(time.Hour)
	expiring, err := v.CreateToken(ctx, tokenvault.Credential(key), tokenvault.TokenRequest{Type: "token", Data: "expires soon", ExpiresAt: &expires})
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	out, err := v.Tokenize(ctx, tokenvault.Credential(key), json.RawMessage(`{"a": "one", "b": "two"}`))
	if err != nil {
		t.Fatalf("Tokenize: %v", err)
	}
	ids := out.(map[string]any)
	a, b := ids["a"].(string), ids["b"].(string)
	f.ids = append(f.ids, expiring.ID, a, b)
	if _, err := v.GetToken(ctx, tokenvault.Credential(key), a); err != nil {
		t.Fatalf("GetToken: %v", err)
	}
	if _, err := v.UpdateToken(ctx, tokenvault.Credential(key), a, json.RawMessage(`{"metadata": {"k": "v"}}`)); err != nil {
		t.Fatalf("UpdateToken: %v", err)
	}
	if _, err := v.Detokenize(ctx, tokenvault.Credential(key), json.RawMessage(`{"x": "{{ `+a+` }}", "y": "{{ `+a+` }}"}`)); err != nil {
		t.Fatalf("Detokenize: %v", err)
	}
	if err := v.DeleteToken(ctx, tokenvault.Credential(key), b); err != nil {
		t.Fatalf("DeleteToken: %v", err)
	}
	// A refused operation counts nothing.
	if _, err := v.GetToken(ctx, tokenvault.Credential(key), b); err == nil {
		t.Fatal("GetToken of a deleted token succeeded")
	}

	reactor := func(code string) string {
		r, err := v.CreateReactor(ctx, tokenvault.Credential(f.mgmt), tokenvault.CreateReactorRequest{Name: "r", Code: code})
		if err != nil {
			t.Fatalf("CreateReactor: %v", err)
		}
		f.ids = append(f.ids, r.ID)
		return r.ID
	}
	ok := reactor(`module.exports = async (req) => ({raw: {n: 1}})`)
	throws := reactor(`module.exports = async (req) => { throw new Error("no") }`)
	spins := reactor(`module.exports = async (req) => { for (;;) {} }`)
	if _, err := v.InvokeReactor(ctx, tokenvault.Credential(key), ok, tokenvault.InvokeReactorRequest{}); err != nil {
		t.Fatalf("InvokeReactor(ok): %v", err)
	}
	if _, err := v.InvokeReactor(ctx, tokenvault.Credential(key), throws, tokenvault.InvokeReactorRequest{}); tokenvault.ErrorKind(err) != tokenvault.CodeFailed {
		t.Fatalf("InvokeReactor(throws) = %v, want CodeFailed", err)
	}
	_, err = v.InvokeReactor(ctx, tokenvault.Credential(key), spins, tokenvault.InvokeReactorRequest{})
	var e *tokenvault.Error
	if !errors.As(err, &e) || e.Stop != tokenvault.CodeTimedOut {
		t.Fatalf("InvokeReactor(spins) = %v, want a timeout", err)
	}

	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	inv, err := v.InvokeReactor(ctx, tokenvault.Credential(key), ok, tokenvault.InvokeReactorRequest{CallbackURL: srv.URL})
	if err != nil {
		t.Fatalf("InvokeReactor(async): %v", err)
	}
	f.ids = append(f.ids, inv.InvocationID)
	deadline := time.Now().Add(20 * time.Second)
	for {
		all := gather(t, f.reg)
		if value(all, "tokenvault_webhook_deliveries_total", "outcome=delivered") == 1 &&
			value(all, "tokenvault_webhooks_pending") == 0 && value(all, "tokenvault_async_invocations") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook was not delivered: deliveries %v, pending %v, async %v",
				value(all, "tokenvault_webhook_deliveries_total", "outcome=delivered"),
				value(all, "tokenvault_webhooks_pending"), value(all, "tokenvault_async_invocations"))
		}
		time.Sleep(10 * time.Millisecond)
	}

	noAuth := false
	proxy, err := v.CreateProxy(ctx, tokenvault.Credential(f.mgmt), tokenvault.ProxyRequest{Name: "p", DestinationURL: srv.URL, RequireAuth: &noAuth,
		RequestTransform: &tokenvault.ProxyTransform{Code: `module.exports = async (req) => ({})`}})
	if err != nil {
		t.Fatalf("CreateProxy: %v", err)
	}
	f.ids = append(f.ids, proxy.ID, proxy.Key)
	if _, err := v.InvokeProxy(ctx, tokenvault.ProxyCall{ProxyKey: proxy.Key, Method: "POST",
		Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"a": 1}`)}); err != nil {
		t.Fatalf("InvokeProxy: %v", err)
	}

	f.clock.Advance(2 * time.Hour)
	if n, err := v.Sweep(ctx); err != nil || n < 1 {
		t.Fatalf("Sweep = %d, %v; want the expired token swept", n, err)
	}

	all := gather(t, f.reg)
	want := []struct {
		name   string
		labels []string
		value  float64
	}{
		{"tokenvault_tokens_total", []string{"op=created"}, 3},
		{"tokenvault_tokens_total", []string{"op=read"}, 1},
		{"tokenvault_tokens_total", []string{"op=updated"}, 1},
		{"tokenvault_tokens_total", []string{"op=deleted"}, 1},
		{"tokenvault_tokens_total", []string{"op=detokenized"}, 1},
		{"tokenvault_code_run_duration_seconds", []string{"kind=reactor", "outcome=ok"}, 2},
		{"tokenvault_code_run_duration_seconds", []string{"kind=reactor", "outcome=error"}, 1},
		{"tokenvault_code_run_duration_seconds", []string{"kind=reactor", "outcome=timeout"}, 1},
		{"tokenvault_code_run_duration_seconds", []string{"kind=reactor", "outcome=memory"}, 0},
		{"tokenvault_code_run_duration_seconds", []string{"kind=transform", "outcome=ok"}, 1},
		{"tokenvault_code_run_duration_seconds", []string{"kind=transform", "outcome=error"}, 0},
		{"tokenvault_webhook_deliveries_total", []string{"outcome=delivered"}, 1},
		{"tokenvault_webhook_deliveries_total", []string{"outcome=failed"}, 0},
		{"tokenvault_webhook_attempts_total", nil, 1},
		{"tokenvault_sweeps_total", []string{"outcome=ok"}, 1},
		{"tokenvault_sweeps_total", []string{"outcome=error"}, 0},
		{"tokenvault_sweep_duration_seconds", nil, 1},
		{"tokenvault_swept_total", []string{"kind=token"}, 1},
		{"tokenvault_swept_total", []string{"kind=session"}, 0},
		{"tokenvault_code_workers_busy", nil, 0},
		{"tokenvault_code_workers_max", nil, 16},
		{"tokenvault_async_invocations", nil, 0},
		{"tokenvault_webhooks_pending", nil, 0},
	}
	for _, w := range want {
		if got := value(all, w.name, w.labels...); got != w.value {
			t.Errorf("%s%v = %v, want %v", w.name, w.labels, got, w.value)
		}
	}
	if n := value(all, "tokenvault_code_workers"); n < 1 || n > 16 {
		t.Errorf("tokenvault_code_workers = %v, want 1 to 16 (warm workers stay)", n)
	}
	// Every write went through a measured bbolt commit; concurrent ones
	// may share one, so there are at most as many commits as writes.
	commits := value(all, "tokenvault_store_commit_duration_seconds")
	if commits < 10 || value(all, "tokenvault_store_commit_updates") != commits {
		t.Errorf("store commits = %v (updates histogram %v), want at least 10, the same in both",
			commits, value(all, "tokenvault_store_commit_updates"))
	}
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes"} {
		if _, ok := all[name]; !ok {
			t.Errorf("%s missing: the runtime and process collectors", name)
		}
	}

	// The label sets are the documented ones.
	wantLabels := map[string]string{
		"tokenvault_tokens_total":                  "op",
		"tokenvault_code_run_duration_seconds":     "kind,outcome",
		"tokenvault_code_workers":                  "",
		"tokenvault_code_workers_busy":             "",
		"tokenvault_code_workers_max":              "",
		"tokenvault_async_invocations":             "",
		"tokenvault_webhooks_pending":              "",
		"tokenvault_webhook_deliveries_total":      "outcome",
		"tokenvault_webhook_attempts_total":        "",
		"tokenvault_sweeps_total":                  "outcome",
		"tokenvault_sweep_duration_seconds":        "",
		"tokenvault_swept_total":                   "kind",
		"tokenvault_store_commit_duration_seconds": "",
		"tokenvault_store_commit_updates":          "",
		"tokenvault_event_delivery_attempts_total": "outcome",
		"tokenvault_event_delivery_lag_seconds":    "",
		"tokenvault_webhooks_disabled_total":       "reason",
	}
	got := labelSets(all)
	for name, labels := range wantLabels {
		if l, ok := got[name]; !ok || l != labels {
			t.Errorf("%s labels = %q (present %v), want %q", name, l, ok, labels)
		}
	}
	for name := range got {
		if strings.HasPrefix(name, "tokenvault_") && wantLabels[name] == "" && got[name] != "" {
			t.Errorf("undocumented metric %s{%s}", name, got[name])
		}
	}

	checkNoIDs(t, all, f.ids)
}

// checkNoIDs fails if any label value of any metric holds one of ids.
func checkNoIDs(t *testing.T, all map[string][]series, ids []string) {
	t.Helper()
	if len(ids) == 0 {
		t.Fatal("no ids to look for")
	}
	n := 0
	for name, ss := range all {
		for _, s := range ss {
			for k, val := range s.labels {
				n++
				for _, id := range ids {
					if id != "" && strings.Contains(val, id) {
						t.Errorf("%s{%s=%q} holds the id or key %q", name, k, val, id)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Error("no label values at all: nothing was checked")
	}
}

// TestTokensNoAllocation: counting a token operation allocates nothing.
func TestTokensNoAllocation(t *testing.T) {
	m := prommetrics.New(prometheus.NewRegistry())
	if n := testing.AllocsPerRun(100, func() { m.Tokens(tokenvault.TokensCreated, 1) }); n != 0 {
		t.Errorf("Tokens allocates %v times, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { m.CodeRun(tokenvault.CodeReactor, tokenvault.CodeOK, time.Millisecond) }); n != 0 {
		t.Errorf("CodeRun allocates %v times, want 0", n)
	}
}

// TestNewTwice: a second registration of the same metrics is refused
// loudly, not silently merged.
func TestNewTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	prommetrics.New(reg)
	defer func() {
		if recover() == nil {
			t.Error("New registered the same metrics twice without panicking")
		}
	}()
	prommetrics.New(reg)
}

// TestHTTPMetrics: requests served through httpapi with the HTTP metrics
// and GET /metrics through promhttp are counted by method, route pattern
// and status; no label value and no byte of /metrics holds an id or key,
// whatever the paths and methods sent.
func TestHTTPMetrics(t *testing.T) {
	f := newFixture(t)
	tok, err := f.v.CreateToken(ctx, tokenvault.Credential(f.key), tokenvault.TokenRequest{Type: "token", Data: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	f.ids = append(f.ids, tok.ID)

	hm := prommetrics.NewHTTP(f.reg)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", httpapi.Observed("/metrics", hm.Observe, promhttp.HandlerFor(f.reg, promhttp.HandlerOpts{})))
	mux.Handle("/", httpapi.New(f.v, httpapi.Options{Observe: hm.Observe}))
	h := hm.InFlight(mux)
	serve := func(method, path, key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		if key != "" {
			req.Header.Set("SVC-API-KEY", key)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, c := range []struct {
		method, path, key string
		status            int
	}{
		{"GET", "/tokens/" + tok.ID, f.key, 200},
		{"GET", "/tokens/" + tok.ID, f.key, 200},
		{"GET", "/tokens/" + tok.ID, "", 401},
		{"GET", "/tokens/" + tok.ID, f.ids[0], 401}, // a tenant id as a key
		{"GET", "/no/such/" + f.ids[0] + "?key=" + f.key, "", 404},
		{"BREW" + strings.ToUpper(tok.ID[:4]), "/tokens", "", 405},
	} {
		if res := serve(c.method, c.path, c.key); res.Code != c.status {
			t.Fatalf("%s %s = %d, want %d: %s", c.method, c.path, res.Code, c.status, res.Body)
		}
	}

	res := serve("GET", "/metrics", "")
	if res.Code != 200 || !strings.HasPrefix(res.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics = %d, Content-Type %q", res.Code, res.Header().Get("Content-Type"))
	}
	body := res.Body.String()
	for _, line := range []string{
		`tokenvault_http_requests_total{method="GET",route="/tokens/{id}",status="200"} 2`,
		`tokenvault_http_requests_total{method="GET",route="/tokens/{id}",status="401"} 2`,
		`tokenvault_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`tokenvault_http_requests_total{method="other",route="unmatched",status="405"} 1`,
		`tokenvault_http_request_duration_seconds_count{method="GET",route="/tokens/{id}"} 4`,
		`tokenvault_http_requests_in_flight 1`,
		`tokenvault_tokens_total{op="read"} 2`,
		`tokenvault_tokens_total{op="created"} 1`,
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	for _, id := range f.ids {
		if strings.Contains(body, id) {
			t.Errorf("/metrics holds the id or key %q", id)
		}
	}
	all := gather(t, f.reg)
	if n := value(all, "tokenvault_http_requests_total", "method=GET", "route=/metrics", "status=200"); n != 1 {
		t.Errorf("GET /metrics counted %v times after it answered, want 1", n)
	}
	checkNoIDs(t, all, f.ids)
}

// stuckSink is an audit sink that never delivers.
type stuckSink struct{}

func (stuckSink) Name() string { return "siem" }

func (stuckSink) Deliver(ctx context.Context, _ []tokenvault.AuditEvent) error {
	<-ctx.Done()
	return ctx.Err()
}

// okSink delivers everything; failSink nothing.
type okSink struct{}

func (okSink) Name() string                                           { return "file" }
func (okSink) Deliver(context.Context, []tokenvault.AuditEvent) error { return nil }

type failSink struct{}

func (failSink) Name() string { return "http" }
func (failSink) Deliver(context.Context, []tokenvault.AuditEvent) error {
	return errors.New("receiver down")
}

// TestAuditExportGauges: a sink that delivers nothing shows its pending
// lines and their age, labelled with its name only; deliveries and
// failures are counted per sink.
func TestAuditExportGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := testfake.NewClock(time.Now().UTC())
	v, err := tokenvault.Open(ctx, tokenvault.Options{
		Path:        filepath.Join(t.TempDir(), "vault.db"),
		Now:         c.Now,
		Metrics:     prommetrics.New(reg),
		Keys:        tokenvault.KeyOptions{MasterKey: make([]byte, 32)},
		Retention:   tokenvault.RetentionOptions{SweepInterval: -1},
		AuditExport: tokenvault.AuditExportOptions{Sinks: []tokenvault.AuditSink{stuckSink{}, okSink{}, failSink{}}, Backoff: 10 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	reg.MustRegister(prommetrics.NewStatsCollector(v))
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(90 * time.Second)
	var all map[string][]series
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		all = gather(t, reg)
		// The tenant's lines commit in several transactions, and the
		// exporter paces its passes: the file sink's queue empties
		// within a pass or two of its first delivery.
		if value(all, "tokenvault_audit_events_exported_total", "sink=file") > 0 &&
			value(all, "tokenvault_audit_export_failures_total", "sink=http") > 1 &&
			value(all, "tokenvault_audit_export_pending", "sink=file") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("in 30 s: %v delivered to file with %v pending, %v failures to http counted; want some, none, 2 or more",
				value(all, "tokenvault_audit_events_exported_total", "sink=file"),
				value(all, "tokenvault_audit_export_pending", "sink=file"),
				value(all, "tokenvault_audit_export_failures_total", "sink=http"))
		}
	}
	if n := value(all, "tokenvault_audit_export_pending", "sink=siem"); n < 1 {
		t.Errorf("tokenvault_audit_export_pending{sink=siem} = %v, want the tenant's creation lines", n)
	}
	if s := value(all, "tokenvault_audit_export_lag_seconds", "sink=siem"); s < 90 {
		t.Errorf("tokenvault_audit_export_lag_seconds{sink=siem} = %v, want at least 90", s)
	}
	if l := labelSets(all); l["tokenvault_audit_export_pending"] != "sink" || l["tokenvault_audit_export_lag_seconds"] != "sink" {
		t.Errorf("labels %q and %q, want sink", l["tokenvault_audit_export_pending"], l["tokenvault_audit_export_lag_seconds"])
	}
	checkNoIDs(t, all, []string{boot.Tenant.ID, boot.Application.ID, string(boot.Application.Key)})
}

// TestAuditChainGauges: the audit chain's backlog gauges are exported,
// unlabelled: the Vault alone on its store holds the linker lease, and
// once its linker has linked the tenant's creation lines none is left.
// (The backlog's count and age while lines wait are tested in the root
// package: TestChainBacklogStats.)
func TestAuditChainGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	v, err := tokenvault.Open(ctx, tokenvault.Options{
		Path:      filepath.Join(t.TempDir(), "vault.db"),
		Keys:      tokenvault.KeyOptions{MasterKey: make([]byte, 32)},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	reg.MustRegister(prommetrics.NewStatsCollector(v))
	if _, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	var all map[string][]series
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		all = gather(t, reg)
		if value(all, "tokenvault_audit_chain_linking") == 1 && value(all, "tokenvault_audit_chain_unlinked") == 0 &&
			value(all, "tokenvault_audit_chain_unlinked_age_seconds") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("in 30 s: linking %v, unlinked %v, age %v; want 1, 0, 0",
				value(all, "tokenvault_audit_chain_linking"), value(all, "tokenvault_audit_chain_unlinked"),
				value(all, "tokenvault_audit_chain_unlinked_age_seconds"))
		}
	}
	for _, name := range []string{"tokenvault_audit_chain_linking", "tokenvault_audit_chain_unlinked", "tokenvault_audit_chain_unlinked_age_seconds"} {
		if l := labelSets(all)[name]; l != "" {
			t.Errorf("%s has labels %q, want none", name, l)
		}
	}
}
