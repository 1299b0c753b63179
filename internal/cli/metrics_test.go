package cli

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
)

// requestKey labels tokenvault_http_requests_total.
type requestKey struct {
	method, route string
	status        int
}

// TestMetrics: /metrics counts every request by method, route pattern and
// status, exactly, with a histogram per method and route that agrees with
// the counters; a scrape counts itself once answered, and sees itself in
// flight.
func TestMetrics(t *testing.T) {
	v, key := testVault(t)
	h := newHandler(v, slog.New(slog.DiscardHandler), slog.New(slog.DiscardHandler), newMetrics(), false, "", "")
	for range 3 {
		wantCode(t, serve(h, "GET", "/tenants/self", key), 200)
	}
	for range 2 {
		wantCode(t, serve(h, "GET", "/tenants/self", ""), 401)
	}
	wantCode(t, serve(h, "GET", "/no/such/route?svc-proxy-key=SECRET", ""), 404)
	wantCode(t, serve(h, "BREW", "/tokens", ""), 405)
	for range 2 {
		wantCode(t, serve(h, "GET", "/healthz", ""), 200)
	}

	res := serve(h, "GET", "/metrics", "")
	wantCode(t, res, 200)
	if ct := res.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type = %q, want the text format 0.0.4", ct)
	}
	if strings.Contains(res.Body.String(), "SECRET") {
		t.Error("/metrics holds a query string")
	}
	families := parseMetrics(t, res.Body.String())
	counters := requestCounts(t, families)
	want := map[requestKey]float64{
		{"GET", "/tenants/self", 200}: 3,
		{"GET", "/tenants/self", 401}: 2,
		{"GET", "unmatched", 404}:     1,
		{"other", "unmatched", 405}:   1,
		{"GET", "/healthz", 200}:      2,
	}
	if !maps.Equal(counters, want) {
		t.Errorf("tokenvault_http_requests_total:\n got %v\nwant %v", counters, want)
	}
	checkHistograms(t, families, counters)
	if n := gauge(families, "tokenvault_http_requests_in_flight"); n != 1 {
		t.Errorf("in flight during a scrape = %v, want 1 (the scrape)", n)
	}

	// The first scrape is counted once answered, so the second sees it.
	families = parseMetrics(t, serve(h, "GET", "/metrics", "").Body.String())
	if n := requestCounts(t, families)[requestKey{"GET", "/metrics", 200}]; n != 1 {
		t.Errorf("GET /metrics counted %v times, want 1", n)
	}
	checkHistograms(t, families, requestCounts(t, families))
}

// TestMetricsConcurrent: requests and scrapes at once lose no count (and,
// under -race, race on nothing).
func TestMetricsConcurrent(t *testing.T) {
	v, _ := testVault(t)
	h := newHandler(v, slog.New(slog.DiscardHandler), slog.New(slog.DiscardHandler), newMetrics(), false, "", "")
	const workers, requests, scrapers, scrapes = 8, 50, 2, 20
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range requests {
				if res := serve(h, "GET", "/healthz", ""); res.Code != 200 {
					t.Errorf("GET /healthz = %d", res.Code)
				}
			}
		})
	}
	for range scrapers {
		wg.Go(func() {
			for range scrapes {
				if _, err := parseExposition(serve(h, "GET", "/metrics", "").Body.String()); err != nil {
					t.Errorf("a scrape under load: %v", err)
				}
			}
		})
	}
	wg.Wait()
	families := parseMetrics(t, serve(h, "GET", "/metrics", "").Body.String())
	counters := requestCounts(t, families)
	want := map[requestKey]float64{{"GET", "/healthz", 200}: workers * requests, {"GET", "/metrics", 200}: scrapers * scrapes}
	if !maps.Equal(counters, want) {
		t.Errorf("counters = %v, want %v", counters, want)
	}
	checkHistograms(t, families, counters)
	if n := gauge(families, "tokenvault_http_requests_in_flight"); n != 1 {
		t.Errorf("in flight = %v, want 1", n)
	}
}

// TestMetricsEndpoint: the running server serves /metrics without a key,
// with the runtime, process, domain and request metrics, and no id or key
// in it; -metrics=false (TOKENVAULT_METRICS=false) turns it off.
func TestMetricsEndpoint(t *testing.T) {
	dir := t.TempDir()
	addr, _, stop := start(t, dir, nil)
	mgmt := readManagementKey(t, dir)
	key := createRevealApp(t, addr, mgmt)
	req, _ := http.NewRequest("POST", "http://"+addr+"/tokenize", strings.NewReader(`{"a": "x", "b": "y"}`))
	req.Header.Set("SVC-API-KEY", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var ids map[string]string
	err = json.NewDecoder(res.Body).Decode(&ids)
	res.Body.Close()
	if err != nil || res.StatusCode != 201 && res.StatusCode != 200 || len(ids) != 2 {
		t.Fatalf("POST /tokenize = %d %v %v", res.StatusCode, ids, err)
	}
	if code, _ := get(t, "http://"+addr+"/tokens/"+ids["a"], key); code != 200 {
		t.Fatalf("GET /tokens/{id} = %d", code)
	}
	res, err = http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	stop()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Errorf("GET /metrics = %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	families := parseMetrics(t, string(body))
	for name, want := range map[string]float64{
		"tokenvault_http_requests_in_flight": 1,
		"tokenvault_code_workers_max":        16,
		"tokenvault_async_invocations":       0,
	} {
		if n := gauge(families, name); n != want {
			t.Errorf("%s = %v, want %v", name, n, want)
		}
	}
	if n := counter(families, "tokenvault_tokens_total", "op", "created"); n != 2 {
		t.Errorf(`tokenvault_tokens_total{op="created"} = %v, want 2`, n)
	}
	if n := counter(families, "tokenvault_tokens_total", "op", "read"); n != 1 {
		t.Errorf(`tokenvault_tokens_total{op="read"} = %v, want 1`, n)
	}
	if requestCounts(t, families)[requestKey{"GET", "/tokens/{id}", 200}] != 1 {
		t.Errorf("GET /tokens/{id} not counted under its pattern: %v", requestCounts(t, families))
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "tokenvault_store_commit_duration_seconds",
		"tokenvault_store_commit_updates", "tokenvault_code_run_duration_seconds", "tokenvault_webhook_deliveries_total",
		"tokenvault_swept_total", "tokenvault_code_workers"} {
		if families[name] == nil {
			t.Errorf("%s missing from /metrics", name)
		}
	}
	if h := families["tokenvault_store_commit_duration_seconds"]; h != nil && h.GetMetric()[0].GetHistogram().GetSampleCount() == 0 {
		t.Error("no bbolt commit measured")
	}
	for _, secret := range []string{mgmt, key, ids["a"], ids["b"]} {
		if strings.Contains(string(body), secret) {
			t.Errorf("/metrics holds the id or key %q", secret)
		}
	}

	addr, _, stop = start(t, t.TempDir(), map[string]string{"TOKENVAULT_METRICS": "false"})
	defer stop()
	if code, _ := get(t, "http://"+addr+"/metrics", ""); code != 404 {
		t.Errorf("GET /metrics with TOKENVAULT_METRICS=false = %d, want 404", code)
	}

	for _, c := range []struct {
		args []string
		env  string
		want bool
	}{{nil, "", true}, {[]string{"-metrics=false"}, "", false}, {nil, "false", false}, {[]string{"-metrics"}, "false", true}} {
		cfg, err := parseConfig(c.args, func(k string) string {
			if k == "TOKENVAULT_METRICS" {
				return c.env
			}
			return ""
		})
		if err != nil || cfg.metrics != c.want {
			t.Errorf("parseConfig(%q, TOKENVAULT_METRICS=%q).metrics = %v, %v; want %v", c.args, c.env, cfg.metrics, err, c.want)
		}
	}
	if _, err := parseConfig(nil, func(k string) string { return map[string]string{"TOKENVAULT_METRICS": "maybe"}[k] }); err == nil {
		t.Errorf("TOKENVAULT_METRICS=maybe accepted")
	}
}

// testVault opens a Vault in memory with one tenant, and returns it with
// the tenant's management key.
func testVault(t *testing.T) (*tokenvault.Vault, string) {
	t.Helper()
	masterKey := make([]byte, 32)
	rand.Read(masterKey)
	v, err := tokenvault.Open(context.Background(), tokenvault.Options{
		Store:     memory.New(),
		Logger:    slog.New(slog.DiscardHandler),
		Keys:      tokenvault.KeyOptions{MasterKey: masterKey},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	boot, err := v.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{Name: "metrics"})
	if err != nil {
		t.Fatal(err)
	}
	return v, string(boot.Application.Key)
}

// serve runs one request through h, in this goroutine: when it returns,
// the request has been observed.
func serve(h http.Handler, method, target, key string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	if key != "" {
		r.Header.Set(httpapi.APIKeyHeader, key)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func wantCode(t *testing.T, res *httptest.ResponseRecorder, code int) {
	t.Helper()
	if res.Code != code {
		t.Fatalf("status %d, want %d: %s", res.Code, code, res.Body)
	}
}

func parseMetrics(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	families, err := parseExposition(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return families
}

// parseExposition reads the text format with Prometheus's own parser.
func parseExposition(text string) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(strings.NewReader(text))
}

// gauge is the value of a gauge without labels, or -1.
func gauge(families map[string]*dto.MetricFamily, name string) float64 {
	f := families[name]
	if f == nil || len(f.GetMetric()) != 1 {
		return -1
	}
	return f.GetMetric()[0].GetGauge().GetValue()
}

// counter is the value of the counter name{label=value}, or -1.
func counter(families map[string]*dto.MetricFamily, name, label, value string) float64 {
	for _, m := range families[name].GetMetric() {
		if labels(m)[label] == value {
			return m.GetCounter().GetValue()
		}
	}
	return -1
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// requestCounts returns tokenvault_http_requests_total by labels, which
// must be exactly method, route and status.
func requestCounts(t *testing.T, families map[string]*dto.MetricFamily) map[requestKey]float64 {
	t.Helper()
	counts := map[requestKey]float64{}
	for _, m := range families["tokenvault_http_requests_total"].GetMetric() {
		l := labels(m)
		status, err := strconv.Atoi(l["status"])
		if len(l) != 3 || l["method"] == "" || l["route"] == "" || err != nil {
			t.Fatalf("tokenvault_http_requests_total labels %v, want method, route and status", l)
		}
		counts[requestKey{l["method"], l["route"], status}] = m.GetCounter().GetValue()
	}
	return counts
}

// checkHistograms holds every duration histogram to the counters: one per
// method and route counted, labelled by exactly those, its count equal to
// the requests counted for them, a positive sum, the default bounds.
func checkHistograms(t *testing.T, families map[string]*dto.MetricFamily, counters map[requestKey]float64) {
	t.Helper()
	type routeKey struct{ method, route string }
	perRoute := map[routeKey]float64{}
	for k, n := range counters {
		perRoute[routeKey{k.method, k.route}] += n
	}
	got := map[routeKey]float64{}
	for _, m := range families["tokenvault_http_request_duration_seconds"].GetMetric() {
		l := labels(m)
		if len(l) != 2 {
			t.Errorf("histogram labels %v, want method and route", l)
		}
		h := m.GetHistogram()
		got[routeKey{l["method"], l["route"]}] = float64(h.GetSampleCount())
		if !(h.GetSampleSum() > 0) {
			t.Errorf("%v: _sum %v, want > 0", l, h.GetSampleSum())
		}
		if n := len(h.GetBucket()); n != 12 {
			t.Errorf("%v: %d buckets, want the 11 default bounds and +Inf", l, n)
		}
	}
	if !maps.Equal(got, perRoute) {
		t.Errorf("histogram counts %v, want %v (the counters)", got, perRoute)
	}
}
