package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestMetrics: /metrics counts every request by method, route pattern and
// status, exactly, with a histogram per method and route that agrees with
// the counters, in the text format and in sorted order.
func TestMetrics(t *testing.T) {
	v, key := testVault(t)
	h := newHandler(v, slog.New(slog.DiscardHandler), true, false, "")
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
	if ct := res.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	samples := parseMetrics(t, res.Body.String())
	counters := requestCounts(t, samples)
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
	checkHistograms(t, samples, counters)
	if n := find(samples, "tokenvault_http_requests_in_flight", nil); n != 1 {
		t.Errorf("in flight during a scrape = %v, want 1 (the scrape)", n)
	}
	checkSorted(t, samples)

	// The first scrape is counted once answered, so the second sees it.
	samples = parseMetrics(t, serve(h, "GET", "/metrics", "").Body.String())
	if n := requestCounts(t, samples)[requestKey{"GET", "/metrics", 200}]; n != 1 {
		t.Errorf("GET /metrics counted %v times, want 1", n)
	}
	checkHistograms(t, samples, requestCounts(t, samples))
}

// TestMetricsHistogram: each duration lands in the first bucket whose bound
// it does not exceed (bounds are inclusive), buckets are cumulative, and
// _sum and _count add up.
func TestMetricsHistogram(t *testing.T) {
	m := newMetrics()
	for _, d := range []time.Duration{5 * time.Millisecond, 7 * time.Millisecond, 7 * time.Millisecond, 2 * time.Second, 20 * time.Second} {
		m.observe(context.Background(), httpapi.Observation{Method: "GET", Route: "/tokens/{id}", Status: 200, Duration: d})
	}
	var b strings.Builder
	m.writeText(&b)
	samples := parseMetrics(t, b.String())
	labels := map[string]string{"method": "GET", "route": "/tokens/{id}"}
	want := map[string]float64{"0.005": 1, "0.01": 3, "0.025": 3, "0.05": 3, "0.1": 3, "0.25": 3, "0.5": 3,
		"1": 3, "2.5": 4, "5": 4, "10": 4, "+Inf": 5}
	for le, n := range want {
		if got := find(samples, "tokenvault_http_request_duration_seconds_bucket", with(labels, "le", le)); got != n {
			t.Errorf("bucket le=%s = %v, want %v", le, got, n)
		}
	}
	if got := find(samples, "tokenvault_http_request_duration_seconds_sum", labels); math.Abs(got-22.019) > 1e-9 {
		t.Errorf("_sum = %v, want 22.019", got)
	}
	if got := find(samples, "tokenvault_http_request_duration_seconds_count", labels); got != 5 {
		t.Errorf("_count = %v, want 5", got)
	}
	if got := find(samples, "tokenvault_http_requests_in_flight", nil); got != 0 {
		t.Errorf("in flight = %v, want 0", got)
	}
	var again strings.Builder
	m.writeText(&again)
	if again.String() != b.String() {
		t.Errorf("two writes of the same counts differ:\n%s\n%s", b.String(), again.String())
	}
}

// TestMetricsSorted: series come out sorted by their labels whatever order
// they were first seen in, so that scrapes of the same counts are the same.
func TestMetricsSorted(t *testing.T) {
	m := newMetrics()
	methods, routes, statuses := []string{"POST", "GET", "DELETE"}, []string{"/tokens/{id}", "/applications", "", "/tokens"}, []int{500, 200, 404}
	for _, method := range methods {
		for _, route := range routes {
			for _, status := range statuses {
				m.observe(context.Background(), httpapi.Observation{Method: method, Route: route, Status: status, Duration: time.Millisecond})
			}
		}
	}
	var b strings.Builder
	m.writeText(&b)
	samples := parseMetrics(t, b.String())
	if n := len(requestCounts(t, samples)); n != len(methods)*len(routes)*len(statuses) {
		t.Errorf("%d counters, want %d", n, len(methods)*len(routes)*len(statuses))
	}
	checkSorted(t, samples)
}

func TestEscapeLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		`/tokens/{id}`:  `/tokens/{id}`,
		`say "hi"`:      `say \"hi\"`,
		`C:\dir`:        `C:\\dir`,
		"two\nlines":    `two\nlines`,
		"\\\"\n":        `\\\"\n`,
		`already \" in`: `already \\\" in`,
	} {
		if got := escapeLabelValue(in); got != want {
			t.Errorf("escapeLabelValue(%q) = %q, want %q", in, got, want)
		}
	}
	// Written and read back through the format, a value survives.
	m := newMetrics()
	route := "/a\"b\\c\nd"
	m.observe(context.Background(), httpapi.Observation{Method: "GET", Route: route, Status: 200, Duration: time.Millisecond})
	var b strings.Builder
	m.writeText(&b)
	samples := parseMetrics(t, b.String())
	if n := find(samples, "tokenvault_http_requests_total", map[string]string{"method": "GET", "route": route, "status": "200"}); n != 1 {
		t.Errorf("the route %q did not read back:\n%s", route, b.String())
	}
}

// TestMetricsConcurrent: requests and scrapes at once lose no count (and,
// under -race, race on nothing).
func TestMetricsConcurrent(t *testing.T) {
	v, _ := testVault(t)
	h := newHandler(v, slog.New(slog.DiscardHandler), true, false, "")
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
	samples := parseMetrics(t, serve(h, "GET", "/metrics", "").Body.String())
	counters := requestCounts(t, samples)
	want := map[requestKey]float64{{"GET", "/healthz", 200}: workers * requests, {"GET", "/metrics", 200}: scrapers * scrapes}
	if !maps.Equal(counters, want) {
		t.Errorf("counters = %v, want %v", counters, want)
	}
	checkHistograms(t, samples, counters)
	if n := find(samples, "tokenvault_http_requests_in_flight", nil); n != 1 {
		t.Errorf("in flight = %v, want 1", n)
	}
}

// TestMetricsEndpoint: the running server serves /metrics without a key,
// and -metrics=false (TOKENVAULT_METRICS=false) turns it off.
func TestMetricsEndpoint(t *testing.T) {
	addr, _, stop := start(t, t.TempDir(), nil)
	get(t, "http://"+addr+"/healthz", "")
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	stop()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != metricsContentType {
		t.Errorf("GET /metrics = %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if samples := parseMetrics(t, string(body)); find(samples, "tokenvault_http_requests_in_flight", nil) < 1 {
		t.Errorf("GET /metrics:\n%s", body)
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
	v, err := tokenvault.Open(context.Background(), tokenvault.Options{Store: memory.New(), MasterKey: masterKey,
		SweepInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	boot, err := v.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{Name: "metrics"})
	if err != nil {
		t.Fatal(err)
	}
	return v, boot.Application.Key
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

// sample is one line of the text format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

func parseMetrics(t *testing.T, text string) []sample {
	t.Helper()
	samples, err := parseExposition(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return samples
}

// parseExposition reads the text format (version 0.0.4) as strictly as we
// write it: every sample after the TYPE of its family, label values quoted
// with only \\, \" and \n escaped, no timestamps, no blank lines.
func parseExposition(text string) ([]sample, error) {
	if !strings.HasSuffix(text, "\n") {
		return nil, fmt.Errorf("does not end with a line feed")
	}
	types := map[string]string{}
	var samples []sample
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "# HELP "):
		case strings.HasPrefix(line, "# TYPE "):
			f := strings.Fields(strings.TrimPrefix(line, "# TYPE "))
			if len(f) != 2 || types[f[0]] != "" || !slices.Contains([]string{"counter", "gauge", "histogram"}, f[1]) {
				return nil, fmt.Errorf("bad TYPE line %q", line)
			}
			types[f[0]] = f[1]
		default:
			s, err := parseSample(line)
			if err != nil {
				return nil, fmt.Errorf("%q: %v", line, err)
			}
			family := s.name
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if f, ok := strings.CutSuffix(s.name, suffix); ok && types[f] == "histogram" {
					family = f
				}
			}
			if types[family] == "" {
				return nil, fmt.Errorf("%q: sample before its TYPE", line)
			}
			samples = append(samples, s)
		}
	}
	return samples, nil
}

func parseSample(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return s, fmt.Errorf("no metric name")
	}
	s.name, line = line[:i], line[i:]
	if rest, ok := strings.CutPrefix(line, "{"); ok {
		for {
			name, r, ok := strings.Cut(rest, `="`)
			if !ok || name == "" || strings.ContainsAny(name, `,}" `) {
				return s, fmt.Errorf("bad label at %q", rest)
			}
			var value strings.Builder
			j := 0
			for ; j < len(r) && r[j] != '"'; j++ {
				if r[j] != '\\' {
					value.WriteByte(r[j])
					continue
				}
				if j++; j == len(r) {
					return s, fmt.Errorf("unterminated escape")
				}
				switch r[j] {
				case '\\', '"':
					value.WriteByte(r[j])
				case 'n':
					value.WriteByte('\n')
				default:
					return s, fmt.Errorf("unknown escape \\%c", r[j])
				}
			}
			if j == len(r) {
				return s, fmt.Errorf("unterminated label value")
			}
			if _, dup := s.labels[name]; dup {
				return s, fmt.Errorf("label %s twice", name)
			}
			s.labels[name] = value.String()
			rest = r[j+1:]
			if rest, ok = strings.CutPrefix(rest, "}"); ok {
				line = rest
				break
			}
			if rest, ok = strings.CutPrefix(rest, ","); !ok {
				return s, fmt.Errorf("expected , or } at %q", rest)
			}
		}
	}
	v, ok := strings.CutPrefix(line, " ")
	if !ok {
		return s, fmt.Errorf("no value")
	}
	var err error
	s.value, err = strconv.ParseFloat(v, 64)
	return s, err
}

// find returns the value of the sample with exactly these labels, or NaN.
func find(samples []sample, name string, labels map[string]string) float64 {
	for _, s := range samples {
		if s.name == name && maps.Equal(s.labels, labels) {
			return s.value
		}
	}
	return math.NaN()
}

// with returns labels and one more.
func with(labels map[string]string, name, value string) map[string]string {
	l := maps.Clone(labels)
	l[name] = value
	return l
}

// labelsKey reads the labels of a tokenvault_http_requests_total sample.
func labelsKey(t *testing.T, s sample) requestKey {
	t.Helper()
	status, err := strconv.Atoi(s.labels["status"])
	if len(s.labels) != 3 || s.labels["method"] == "" || s.labels["route"] == "" || err != nil {
		t.Fatalf("%s labels %v, want method, route and status", s.name, s.labels)
	}
	return requestKey{s.labels["method"], s.labels["route"], status}
}

// checkSorted checks that the counters and the histograms come in the
// order of their labels.
func checkSorted(t *testing.T, samples []sample) {
	t.Helper()
	var counters []requestKey
	var histograms []routeKey
	for _, s := range samples {
		switch s.name {
		case "tokenvault_http_requests_total":
			counters = append(counters, labelsKey(t, s))
		case "tokenvault_http_request_duration_seconds_count":
			histograms = append(histograms, routeKey{s.labels["method"], s.labels["route"]})
		}
	}
	if !slices.IsSortedFunc(counters, compareRequestKeys) {
		t.Errorf("counters not sorted: %v", counters)
	}
	if !slices.IsSortedFunc(histograms, func(a, b routeKey) int {
		return compareRequestKeys(requestKey{a.method, a.route, 0}, requestKey{b.method, b.route, 0})
	}) {
		t.Errorf("histograms not sorted: %v", histograms)
	}
}

func compareRequestKeys(a, b requestKey) int {
	return cmp.Or(strings.Compare(a.method, b.method), strings.Compare(a.route, b.route), cmp.Compare(a.status, b.status))
}

// requestCounts returns tokenvault_http_requests_total by labels.
func requestCounts(t *testing.T, samples []sample) map[requestKey]float64 {
	t.Helper()
	counts := map[requestKey]float64{}
	for _, s := range samples {
		if s.name == "tokenvault_http_requests_total" {
			counts[labelsKey(t, s)] = s.value
		}
	}
	return counts
}

// checkHistograms holds every duration histogram to the format and to the
// counters: one per method and route counted, the expected bounds in
// order, cumulative counts, +Inf equal to _count, and _count equal to the
// requests counted for that method and route.
func checkHistograms(t *testing.T, samples []sample, counters map[requestKey]float64) {
	t.Helper()
	perRoute := map[routeKey]float64{}
	for k, n := range counters {
		perRoute[routeKey{k.method, k.route}] += n
	}
	wantLE := []string{"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"}
	buckets := map[routeKey][]sample{}
	for _, s := range samples {
		if s.name == "tokenvault_http_request_duration_seconds_bucket" {
			k := routeKey{s.labels["method"], s.labels["route"]}
			buckets[k] = append(buckets[k], s)
		}
	}
	if !maps.EqualFunc(buckets, perRoute, func([]sample, float64) bool { return true }) {
		t.Errorf("histograms for %v, counters for %v", slices.Collect(maps.Keys(buckets)), slices.Collect(maps.Keys(perRoute)))
	}
	for k, want := range perRoute {
		labels := map[string]string{"method": k.method, "route": k.route}
		bs := buckets[k]
		var les []string
		for i, b := range bs {
			les = append(les, b.labels["le"])
			if i > 0 && b.value < bs[i-1].value {
				t.Errorf("%v: bucket le=%s (%v) < le=%s (%v)", k, b.labels["le"], b.value, bs[i-1].labels["le"], bs[i-1].value)
			}
		}
		if !slices.Equal(les, wantLE) {
			t.Errorf("%v: bucket bounds %v, want %v", k, les, wantLE)
			continue
		}
		count := find(samples, "tokenvault_http_request_duration_seconds_count", labels)
		if count != want || bs[len(bs)-1].value != count {
			t.Errorf("%v: _count %v, +Inf bucket %v, requests counted %v", k, count, bs[len(bs)-1].value, want)
		}
		if sum := find(samples, "tokenvault_http_request_duration_seconds_sum", labels); !(sum > 0) {
			t.Errorf("%v: _sum %v, want > 0", k, sum)
		}
	}
}
