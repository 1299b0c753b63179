package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const testKey = "test-key"

// fakeVault implements the three endpoints loadgen uses. It refuses a
// value it has already tokenized, so non-unique values show up as errors.
type fakeVault struct {
	mu         sync.Mutex
	seen       map[string]bool   // values tokenized
	tokens     map[string]string // id → value
	gets       map[string]int    // id → GET count
	created    int
	health     atomic.Int64
	failEach   int64 // when > 0, every failEach-th GET /health answers 500
	refuseEach int64 // when > 0, every refuseEach-th GET /health answers 429

	tokenizeCalls      atomic.Int64
	refuseTokenizeEach int64 // when > 0, every refuseTokenizeEach-th POST /tokenize answers 429
}

func newFakeVault(t *testing.T) (*fakeVault, *httptest.Server) {
	t.Helper()
	f := &fakeVault{seen: map[string]bool{}, tokens: map[string]string{}, gets: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /tokenize", f.tokenize)
	mux.HandleFunc("GET /tokens/{id}", f.getToken)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		n := f.health.Add(1)
		if f.failEach > 0 && n%f.failEach == 0 {
			http.Error(w, "planned failure", http.StatusInternalServerError)
			return
		}
		if f.refuseEach > 0 && n%f.refuseEach == 0 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "planned refusal", http.StatusTooManyRequests)
			return
		}
		w.Write([]byte("ok"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeVault) authorized(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get(apiKeyHeader) != testKey {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"title":"Unauthorized","status":401}`))
		return false
	}
	return true
}

func (f *fakeVault) tokenize(w http.ResponseWriter, r *http.Request) {
	if !f.authorized(w, r) {
		return
	}
	if n := f.tokenizeCalls.Add(1); f.refuseTokenizeEach > 0 && n%f.refuseTokenizeEach == 0 {
		http.Error(w, "planned refusal", http.StatusTooManyRequests)
		return
	}
	if r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "want application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var card struct {
		Type string `json:"type"`
		Data struct {
			Number string `json:"number"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &card) == nil && card.Type == "card" {
		if !luhnValid(card.Data.Number) {
			http.Error(w, "bad card number "+card.Data.Number, http.StatusBadRequest)
			return
		}
		body = fmt.Appendf(nil, `{"card":%q}`, card.Data.Number)
	}
	var in map[string]string
	if err := json.Unmarshal(body, &in); err != nil || len(in) == 0 {
		http.Error(w, fmt.Sprintf("bad body: %v", err), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for k, v := range in {
		if f.seen[v] {
			http.Error(w, "duplicate value "+v, http.StatusConflict)
			return
		}
		f.seen[v] = true
		f.created++
		id := fmt.Sprintf("tok-%d", f.created)
		f.tokens[id] = v
		out[k] = id
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(out)
}

func (f *fakeVault) getToken(w http.ResponseWriter, r *http.Request) {
	if !f.authorized(w, r) {
		return
	}
	id := r.PathValue("id")
	f.mu.Lock()
	v, ok := f.tokens[id]
	if ok {
		f.gets[id]++
	}
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"id": id, "data": v})
}

// luhnValid reports whether a 16-digit number passes the Luhn check.
func luhnValid(number string) bool {
	if len(number) != 16 {
		return false
	}
	sum := 0
	for i := range number {
		d := int(number[len(number)-1-i] - '0')
		if d < 0 || d > 9 {
			return false
		}
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// testConfig is a short, fixed-count run against url.
func testConfig(url, mode string) config {
	return config{url: url, key: testKey, mode: mode, path: "/health", batch: 50, prefill: 10,
		c: 4, n: 200, warmup: 20 * time.Millisecond}
}

func checkSane(t *testing.T, res result) {
	t.Helper()
	if !(0 < res.P50 && res.P50 <= res.P90 && res.P90 <= res.P99 && res.P99 <= res.Max) {
		t.Errorf("percentiles out of order: %+v", res)
	}
	if res.Duration <= 0 || res.ReqPerSec <= 0 {
		t.Errorf("duration %v, req/s %v: want positive", res.Duration, res.ReqPerSec)
	}
}

func TestRunModes(t *testing.T) {
	for _, mode := range []string{"tokenize", "card", "batch", "get", "empty"} {
		t.Run(mode, func(t *testing.T) {
			f, srv := newFakeVault(t)
			var stderr bytes.Buffer
			res, err := run(context.Background(), testConfig(srv.URL, mode), &stderr)
			if err != nil {
				t.Fatal(err)
			}
			if res.Mode != mode || res.Concurrency != 4 || res.Requests != 200 || res.Errors != 0 || res.Refused != 0 {
				t.Errorf("result %+v, want mode %s, c=4, 200 requests, no errors, no refusals", res, mode)
			}
			if stderr.Len() > 0 {
				t.Errorf("stderr: %s", stderr.String())
			}
			checkSane(t, res)
			f.mu.Lock()
			defer f.mu.Unlock()
			switch mode {
			case "tokenize", "card":
				if f.created < 200 { // plus the warm-up
					t.Errorf("server created %d tokens, want at least 200", f.created)
				}
			case "batch":
				if f.created < 200*50 {
					t.Errorf("server created %d tokens, want at least %d", f.created, 200*50)
				}
				if want := res.ReqPerSec * 50; math.Abs(res.TokensPerSec-want) > 1e-6*want {
					t.Errorf("tokens/s = %v, want %v", res.TokensPerSec, want)
				}
				if !strings.Contains(res.line(), " tokens/s=") {
					t.Errorf("line %q has no tokens/s", res.line())
				}
			case "get":
				if f.created != 10 || len(f.gets) != 10 {
					t.Errorf("created %d tokens, read %d distinct; want 10 and 10", f.created, len(f.gets))
				}
				total, lo, hi := 0, 1<<30, 0
				for _, n := range f.gets {
					total, lo, hi = total+n, min(lo, n), max(hi, n)
				}
				if total < 200 || hi-lo > 1 { // round robin: even spread
					t.Errorf("reads per token %v: want at least 200 in all, spread evenly", f.gets)
				}
			case "empty":
				if n := f.health.Load(); n < 200 {
					t.Errorf("server saw %d GET /health, want at least 200", n)
				}
			}
			if mode != "batch" && res.TokensPerSec != 0 {
				t.Errorf("tokens/s = %v outside batch mode", res.TokensPerSec)
			}
		})
	}
}

func TestRunForDuration(t *testing.T) {
	_, srv := newFakeVault(t)
	cfg := testConfig(srv.URL, "empty")
	cfg.n, cfg.d, cfg.warmup = 0, 150*time.Millisecond, 0
	res, err := run(context.Background(), cfg, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Errors != 0 || res.Duration < cfg.d {
		t.Errorf("result %+v: want requests, no errors, at least %v", res, cfg.d)
	}
	checkSane(t, res)
}

func TestRunCountsErrors(t *testing.T) {
	t.Run("wrong key", func(t *testing.T) {
		_, srv := newFakeVault(t)
		cfg := testConfig(srv.URL, "tokenize")
		cfg.key = "wrong"
		var stderr bytes.Buffer
		res, err := run(context.Background(), cfg, &stderr)
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests != 200 || res.Errors != 200 {
			t.Errorf("requests %d, errors %d: want 200 and 200", res.Requests, res.Errors)
		}
		out := stderr.String()
		if strings.Count(out, "\n") != 1 || !strings.Contains(out, "status 401") || !strings.Contains(out, "Unauthorized") {
			t.Errorf("stderr = %q, want the first 401 once", out)
		}
	})
	t.Run("every third fails", func(t *testing.T) {
		f, srv := newFakeVault(t)
		f.failEach = 3
		cfg := testConfig(srv.URL, "empty")
		cfg.n, cfg.c, cfg.warmup = 90, 3, 0
		var stderr bytes.Buffer
		res, err := run(context.Background(), cfg, &stderr)
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests != 90 || res.Errors != 30 {
			t.Errorf("requests %d, errors %d: want 90 and 30", res.Requests, res.Errors)
		}
		if !strings.Contains(stderr.String(), "status 500, want 200: planned failure") {
			t.Errorf("stderr = %q", stderr.String())
		}
	})
	t.Run("refusals apart from errors", func(t *testing.T) {
		f, srv := newFakeVault(t)
		f.failEach, f.refuseEach = 5, 3 // 15, 30, ... fail: a failure is not also a refusal
		cfg := testConfig(srv.URL, "empty")
		cfg.n, cfg.c, cfg.warmup = 90, 3, 0
		var stderr bytes.Buffer
		res, err := run(context.Background(), cfg, &stderr)
		if err != nil {
			t.Fatal(err)
		}
		// Of 1..90: 18 multiples of 5 fail; 30 multiples of 3, less the 6 of 15, are refused.
		if res.Requests != 90 || res.Errors != 18 || res.Refused != 24 {
			t.Errorf("requests %d, errors %d, refused %d: want 90, 18 and 24", res.Requests, res.Errors, res.Refused)
		}
		out := stderr.String()
		if !strings.Contains(out, "18 errors; the first: GET /health: status 500") ||
			!strings.Contains(out, "24 refused by the server's rate limits (429); the first: GET /health: status 429, want 200: planned refusal") {
			t.Errorf("stderr = %q, want the first error and the first refusal, each with its count", out)
		}
		if line := res.line(); !strings.Contains(line, " errors=18 refused=24 ") {
			t.Errorf("line %q, want errors=18 refused=24", line)
		}
	})
	t.Run("batch counts tokens of successes only", func(t *testing.T) {
		f, srv := newFakeVault(t)
		f.refuseTokenizeEach = 4
		cfg := testConfig(srv.URL, "batch")
		cfg.n, cfg.c, cfg.warmup = 40, 2, 0
		res, err := run(context.Background(), cfg, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests != 40 || res.Errors != 0 || res.Refused != 10 {
			t.Fatalf("requests %d, errors %d, refused %d: want 40, 0 and 10", res.Requests, res.Errors, res.Refused)
		}
		if want := float64(30*cfg.batch) / res.Duration.Seconds(); math.Abs(res.TokensPerSec-want) > 1e-6*want {
			t.Errorf("tokens/s = %v, want %v (30 successful requests of %d)", res.TokensPerSec, want, cfg.batch)
		}
	})
	t.Run("transport error", func(t *testing.T) {
		_, srv := newFakeVault(t)
		srv.Close()
		cfg := testConfig(srv.URL, "empty")
		cfg.n, cfg.warmup = 20, 0
		var stderr bytes.Buffer
		res, err := run(context.Background(), cfg, &stderr)
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests != 20 || res.Errors != 20 || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("requests %d, errors %d, stderr %q: want 20, 20, one line", res.Requests, res.Errors, stderr.String())
		}
	})
	t.Run("get prefill refused", func(t *testing.T) {
		_, srv := newFakeVault(t)
		cfg := testConfig(srv.URL, "get")
		cfg.key = "wrong"
		if _, err := run(context.Background(), cfg, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "status 401") {
			t.Errorf("run = %v, want the prefill's 401", err)
		}
	})
}

func TestBatchBody(t *testing.T) {
	v := &values{run: runID()}
	var a, b map[string]string
	if err := json.Unmarshal(v.batch(1000), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(v.batch(1000), &b); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range []map[string]string{a, b} {
		if len(m) != 1000 || m["v0"] == "" || m["v999"] == "" {
			t.Fatalf("batch has %d keys (v0 %q, v999 %q), want v0…v999", len(m), m["v0"], m["v999"])
		}
		for _, val := range m {
			if seen[val] {
				t.Fatalf("value %q repeated", val)
			}
			seen[val] = true
		}
	}
}

func TestParseFlags(t *testing.T) {
	env := func(k string) string {
		if k == "TOKENVAULT_KEY" {
			return "from-env"
		}
		return ""
	}
	cfg, err := parseFlags(nil, env, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.key != "from-env" || cfg.mode != "tokenize" || cfg.c != 16 || cfg.d != 10*time.Second ||
		cfg.warmup != time.Second || cfg.batch != 1000 || cfg.prefill != 100 || cfg.path != "/health" {
		t.Errorf("defaults: %+v", cfg)
	}
	cfg, err = parseFlags([]string{"-key", "flag", "-mode", "batch", "-n", "5", "-d", "0", "-json"}, env, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.key != "flag" || cfg.mode != "batch" || cfg.n != 5 || !cfg.json {
		t.Errorf("flags: %+v", cfg)
	}
	for _, args := range [][]string{
		{"-mode", "delete"}, {"-c", "0"}, {"-d", "0"}, {"-n", "-1"}, {"-mode", "batch", "-batch", "0"},
		{"-mode", "get", "-prefill", "0"}, {"-warmup", "-1s"}, {"extra"},
	} {
		if _, err := parseFlags(args, env, &bytes.Buffer{}); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
}

func TestResultOutput(t *testing.T) {
	res := result{Mode: "get", Concurrency: 16, Requests: 1000, Errors: 2, Refused: 3, Duration: 2 * time.Second,
		ReqPerSec: 500, P50: 1234567, P90: 2 * time.Millisecond, P99: 3 * time.Millisecond, Max: 4 * time.Millisecond}
	want := "mode=get c=16 requests=1000 errors=2 refused=3 duration=2s req/s=500.0 p50=1.23ms p90=2ms p99=3ms max=4ms"
	if got := res.line(); got != want {
		t.Errorf("line = %q\nwant   %q", got, want)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"mode":"get","concurrency":16,"requests":1000,"errors":2,"refused":3,"duration_ns":2000000000,"req_per_s":500,` +
		`"p50_ns":1234567,"p90_ns":2000000,"p99_ns":3000000,"max_ns":4000000}`
	if string(b) != wantJSON {
		t.Errorf("json = %s\nwant   %s", b, wantJSON)
	}
}
